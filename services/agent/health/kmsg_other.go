//go:build !linux

package health

import "github.com/cockroachdb/errors"

// Kmsg reads /dev/kmsg, which only Linux has.
func Kmsg(path string) (KernelLog, error) {
	return nil, errors.Newf("no kernel log device %s on this system", path)
}
