package config

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// The stream caps take sizes as Docker's flags do, and a cap too small to
// hold a message is refused naming its flag.
func TestStreamCapFlags(t *testing.T) {
	parse := func(args ...string) (Base, error) {
		var b Base
		fs := pflag.NewFlagSet("svc", pflag.ContinueOnError)
		b.Register(fs)
		if err := fs.Parse(args); err != nil {
			return b, err
		}
		b.NATSURL, b.Etcd = "nats://x", "x"
		return b, b.Validate()
	}
	b, err := parse()
	if err != nil || b.EventsMaxBytes != 0 || b.HistoryMaxBytes != 0 {
		t.Fatalf("defaults: %d, %d, %v (want no caps)", b.EventsMaxBytes, b.HistoryMaxBytes, err)
	}
	b, err = parse("--events-max-bytes", "20GiB", "--history-max-bytes", "512m")
	if err != nil || b.EventsMaxBytes != 20<<30 || b.HistoryMaxBytes != 512<<20 {
		t.Fatalf("20GiB and 512m: %d, %d, %v", b.EventsMaxBytes, b.HistoryMaxBytes, err)
	}
	for args, want := range map[[2]string]string{
		{"--events-max-bytes", "lots"}:          `"lots" is not a size`,
		{"--history-max-bytes", "-1"}:           `"-1" is not a size`,
		{"--events-max-bytes", "9999999999TiB"}: `"9999999999TiB" is not a size up to 1PiB`,
		{"--events-max-bytes", "2PiB"}:          `"2PiB" is not a size up to 1PiB`,
		{"--events-max-bytes", "512KiB"}:        "--events-max-bytes: 524288 bytes is below the 1MiB minimum",
		{"--history-max-bytes", "100000"}:       "--history-max-bytes: 100000 bytes is below the 1MiB minimum",
	} {
		if _, err := parse(args[0], args[1]); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s %s: %v, want %q", args[0], args[1], err, want)
		}
	}
}
