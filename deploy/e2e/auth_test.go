//go:build compose

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/lockstep-dev/lockstep/shared/plumbing/connection"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
)

// loadCredentials reads the current context of the config file at path
// (deploy/secrets.sh's admin/config.yaml).
func loadCredentials(path string) (connection.Credentials, error) {
	file, err := connection.LoadCLIConfig(path)
	if err != nil {
		return connection.Credentials{}, err
	}
	if file.Path == "" {
		return connection.Credentials{}, fmt.Errorf("%s is missing: deploy/up.sh (secrets.sh) makes it", path)
	}
	ctx, err := file.Use("")
	if err != nil {
		return connection.Credentials{}, err
	}
	return connection.Credentials{
		Creds: ctx.Creds, TLSCA: ctx.TLSCA, TLSCert: ctx.TLSCert, TLSKey: ctx.TLSKey,
		EtcdCA: ctx.EtcdCA, EtcdCert: ctx.EtcdCert, EtcdKey: ctx.EtcdKey,
	}, nil
}

// authRefused checks that the cluster lets in only who shows credentials
// from its authority: NATS refuses a client that does not trust its CA
// (the server requires TLS, so there is no plain text), TLS without a
// client certificate and a client certificate without creds; etcd refuses
// a client without a certificate, and plain text.
func authRefused(t testing.TB, c *cluster, _ string) string {
	a := c.admin
	natsCases := []struct {
		name string
		opts []nats.Option
		want string // in the error, lower case
	}{
		{"no TLS options", nil, ""},
		{"TLS, no client certificate", []nats.Option{nats.RootCAs(a.TLSCA)}, ""},
		{"client certificate, no creds", []nats.Option{nats.RootCAs(a.TLSCA), nats.ClientCert(a.TLSCert, a.TLSKey)}, "authorization"},
	}
	for _, tc := range natsCases {
		opts := append([]nats.Option{nats.Timeout(5 * time.Second), nats.MaxReconnects(0)}, tc.opts...)
		nc, err := nats.Connect(natsURLs, opts...)
		if err == nil {
			nc.Close()
			t.Errorf("NATS, %s: connected; want refused", tc.name)
			continue
		}
		if tc.want != "" && !strings.Contains(strings.ToLower(err.Error()), tc.want) {
			t.Errorf("NATS, %s: %v; want an error about %s", tc.name, err, tc.want)
		}
		t.Logf("NATS, %s: refused (%v)", tc.name, err)
	}
	// And admin's creds over TLS get in (what every other phase relies on).
	nc, err := nats.Connect(natsURLs, nats.Timeout(5*time.Second), nats.MaxReconnects(0),
		nats.RootCAs(a.TLSCA), nats.ClientCert(a.TLSCert, a.TLSKey), nats.UserCredentials(a.Creds))
	if err != nil {
		t.Errorf("NATS as admin: %v", err)
	} else {
		nc.Close()
	}

	for _, tc := range []struct {
		name, urls string
		opts       []store.Option
	}{
		{"TLS, no client certificate", etcdURLs, []store.Option{store.WithTLS(a.EtcdCA, "", "")}},
		{"plain text", strings.ReplaceAll(etcdURLs, "https://", "http://"), nil},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		cli, err := store.ConnectTimeout(ctx, tc.urls, 2*time.Second, tc.opts...)
		if err == nil {
			// A client may dial lazily: a read is what must fail.
			_, err = cli.Get(ctx, "/")
			_ = cli.Close()
		}
		cancel()
		if err == nil {
			t.Errorf("etcd, %s: answered; want refused", tc.name)
			continue
		}
		t.Logf("etcd, %s: refused (%v)", tc.name, err)
	}
	return "anonymous NATS and certificate-less etcd clients refused"
}
