package testenv

import (
	"context"
	"testing"
)

func TestStartServesBoth(t *testing.T) {
	env := Start(t)
	ctx := context.Background()
	if _, err := env.Etcd.Put(ctx, "/probe", "x"); err != nil {
		t.Fatalf("etcd put: %v", err)
	}
	if err := env.Bus.PublishJSON(ctx, "lockstep.v1.work.report", "", map[string]int{"a": 1}); err != nil {
		t.Fatalf("publish to work stream: %v", err)
	}
}
