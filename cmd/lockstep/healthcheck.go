//go:build !lockstep_client

package main

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/cobra"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
)

// healthcheck answers a container health check: exit 0 when every
// requested check passes, 1 with a one-line reason when one does not. It
// needs no shell, so it runs in images built FROM scratch. Its --nats and
// --etcd are its own: the servers to check, taken as given (no
// environment, no config file, no credentials).
func (a *app) healthcheck(cmd *cobra.Command) runE {
	cmd.Long = longHelp(`
		Check that an endpoint, NATS or etcd answers; for container health checks.
		Exits 0 when every given check passes, 1 with a one-line reason otherwise.`)
	fs := cmd.Flags()
	url := fs.String("url", "", "HTTP URL to GET (e.g. http://127.0.0.1:8222/healthz); healthy on a 2xx answer")
	natsURL := fs.String("nats", "", "NATS URL(s): healthy when a server accepts a connection and answers JetStream account info")
	etcd := fs.String("etcd", "", "etcd endpoint(s): healthy when a (quorum) read succeeds")
	node := fs.String("node", "", "with --etcd: healthy only while this node is registered (its agent holds a live lease)")
	timeout := fs.Duration("timeout", 2*time.Second, "give up on the checks after this long")
	return func(cmd *cobra.Command, _ []string) error {
		switch {
		case *url == "" && *natsURL == "" && *etcd == "":
			return usagef("healthcheck: give at least one of --url, --nats, --etcd")
		case *node != "" && *etcd == "":
			return usagef("healthcheck: --node needs --etcd")
		case *timeout <= 0:
			return usagef("--timeout: %s is not positive", *timeout)
		}
		ctx, cancel := context.WithTimeout(cmd.Context(), *timeout)
		defer cancel()

		var passed []string
		for _, c := range []struct {
			what, target string
			check        func() error
		}{
			{"http", *url, func() error { return checkHTTP(ctx, *url) }},
			{"nats", *natsURL, func() error { return checkNATS(ctx, *natsURL, *timeout) }},
			{"etcd", *etcd, func() error { return checkEtcd(ctx, *etcd, *node, *timeout) }},
		} {
			if c.target == "" {
				continue
			}
			if err := c.check(); err != nil {
				// One line: a health check's output is shown in `docker ps`/inspect.
				reason := strings.Join(strings.Fields(err.Error()), " ")
				return &exitError{code: 1, msg: "unhealthy: " + reason}
			}
			passed = append(passed, c.what)
		}
		fmt.Fprintln(a.env.stdout, "healthy:", strings.Join(passed, ", "))
		return nil
	}
}

// checkHTTP GETs url and wants a 2xx status.
func checkHTTP(ctx context.Context, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return errors.Wrapf(err, "--url %s", url)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return errors.Wrapf(err, "GET %s", url)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return errors.Newf("GET %s: %s", url, resp.Status)
	}
	return nil
}

// checkNATS connects once (no reconnects) and asks for the JetStream
// account info, which fails while JetStream is disabled or, on a cluster,
// has no meta leader.
func checkNATS(ctx context.Context, url string, timeout time.Duration) error {
	nc, err := nats.Connect(url, nats.Name("lockstep-healthcheck"), nats.Timeout(timeout), nats.NoReconnect())
	if err != nil {
		return errors.Wrapf(err, "connect to nats at %s", url)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return errors.Wrap(err, "jetstream context")
	}
	if _, err := js.AccountInfo(ctx); err != nil {
		return errors.Wrapf(err, "jetstream at %s", nc.ConnectedUrlRedacted())
	}
	return nil
}

// checkEtcd makes one linearizable read, which needs a quorum; with node,
// the read is the node's registration key and it must exist.
func checkEtcd(ctx context.Context, endpoints, node string, timeout time.Duration) error {
	cli, err := clientv3.New(clientv3.Config{
		Endpoints:   strings.Split(endpoints, ","),
		DialTimeout: timeout,
		Logger:      zap.NewNop(),
	})
	if err != nil {
		return errors.Wrapf(err, "connect to etcd at %s", endpoints)
	}
	defer cli.Close()
	key := store.Prefix + "ping"
	if node != "" {
		key = store.NodeKey(node)
	}
	resp, err := cli.Get(ctx, key, clientv3.WithCountOnly())
	if err != nil {
		return errors.Wrapf(err, "etcd at %s does not answer", endpoints)
	}
	if node != "" && resp.Count == 0 {
		return errors.Newf("node %s is not registered in etcd", node)
	}
	return nil
}
