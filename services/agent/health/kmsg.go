package health

import "bytes"

// maxKmsgRead bounds what one call of a Kmsg KernelLog returns: the Checker
// keeps the newest maxOutput bytes of it anyway.
const maxKmsgRead = 4 << 20

// kmsgText is the message of one /dev/kmsg record
// ("<prio>,<seq>,<usec>,<flags>;<message>\n" followed by " KEY=value"
// lines): the text dmesg prints after the timestamp.
func kmsgText(rec []byte) []byte {
	if i := bytes.IndexByte(rec, ';'); i >= 0 {
		rec = rec[i+1:]
	}
	if j := bytes.IndexByte(rec, '\n'); j >= 0 {
		rec = rec[:j]
	}
	return rec
}
