//go:build !unix

package health

import "os/exec"

// killGroupOnCancel: without process groups, exec's default (kill the
// program itself) is all there is.
func killGroupOnCancel(*exec.Cmd) {}
