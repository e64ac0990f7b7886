package config_test

import (
	"context"
	"testing"

	"github.com/lockstep-dev/lockstep/shared/contract/subjects"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

// A service started with the caps declares the streams with them.
func TestClientsDeclareTheStreamCaps(t *testing.T) {
	env := testenv.Start(t)
	b := env.Base(t)
	b.EventsMaxBytes, b.HistoryMaxBytes = 2<<20, 3<<20
	ctx := context.Background()
	bs, cli, err := b.Clients(ctx, "admission", true)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { bs.Close(); _ = cli.Close() }()
	for name, want := range map[string]int64{subjects.StreamEvents: 2 << 20, subjects.StreamHistory: 3 << 20} {
		s, err := env.Bus.JS.Stream(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.CachedInfo().Config.MaxBytes; got != want {
			t.Errorf("%s max bytes = %d, want %d", name, got, want)
		}
	}
}
