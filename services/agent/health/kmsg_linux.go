package health

import (
	"bytes"
	"context"
	"io"
	"sync"
	"syscall"

	"github.com/cockroachdb/errors"
)

// Kmsg is a KernelLog reading the kernel's log device (path: /dev/kmsg).
// It starts at the end of the log, so each call returns the messages logged
// since the previous one (the first: since Kmsg): Xids from before the
// agent started are not seen again, while the withdrawals they caused
// persist in the node's registration. Records the kernel overwrote before
// they were read are skipped. Reading /dev/kmsg needs CAP_SYSLOG where
// kernel.dmesg_restrict is 1.
func Kmsg(path string) (KernelLog, error) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, errors.Wrapf(err, "open %s", path)
	}
	if _, err := syscall.Seek(fd, 0, io.SeekEnd); err != nil {
		_ = syscall.Close(fd)
		return nil, errors.Wrapf(err, "seek to the end of %s", path)
	}
	var mu sync.Mutex
	// One read returns one record; 16 KiB is above the kernel's record
	// limit (a smaller buffer fails with EINVAL).
	buf := make([]byte, 16<<10)
	return func(ctx context.Context) ([]byte, error) {
		mu.Lock()
		defer mu.Unlock()
		var out bytes.Buffer
		for out.Len() < maxKmsgRead && ctx.Err() == nil {
			n, err := syscall.Read(fd, buf)
			switch {
			case err == syscall.EAGAIN:
				return out.Bytes(), nil
			case err == syscall.EPIPE, err == syscall.EINTR:
				continue // records overwritten before we read them; interrupted
			case err != nil:
				return out.Bytes(), errors.Wrapf(err, "read %s", path)
			case n <= 0:
				return out.Bytes(), nil
			}
			out.Write(kmsgText(buf[:n]))
			out.WriteByte('\n')
		}
		return out.Bytes(), ctx.Err()
	}, nil
}
