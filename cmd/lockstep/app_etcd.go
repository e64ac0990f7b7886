//go:build !lockstep_client

package main

import (
	"context"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
)

// dialEtcd connects to the cluster's etcd with the connection's
// credentials (commands that take the etcd flags).
func (a *app) dialEtcd(ctx context.Context) (*clientv3.Client, error) {
	conn, err := a.connection()
	if err != nil {
		return nil, err
	}
	cli, err := store.Connect(ctx, conn.Etcd, store.WithCredentials(conn.Credentials))
	if err != nil {
		return nil, err
	}
	a.closers = append(a.closers, func() { _ = cli.Close() })
	return cli, nil
}
