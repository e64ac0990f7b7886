package embedded

import (
	"net"
	"strconv"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats-server/v2/server"

	"github.com/lockstep-dev/lockstep/shared/plumbing/auth"
)

// NATSConfig configures an embedded NATS server.
type NATSConfig struct {
	// Listen is HOST:PORT; port 0 or -1 picks a free port.
	Listen string
	// StoreDir holds JetStream data on disk.
	StoreDir string
	// Trust, when set, turns authentication on: only credentials signed by
	// its operator's accounts connect, each with its own permissions.
	Trust *auth.ServerTrust
	// MaxConsumers, when positive, is the JetStream limit of consumers per
	// stream of the server's one account (no Trust), as an operator's
	// account may set one: for tests of how the services fit under it.
	MaxConsumers int
}

// NATS is a running embedded NATS server.
type NATS struct {
	srv *server.Server
}

// StartNATS starts a JetStream-enabled NATS server and waits until it
// accepts connections.
func StartNATS(cfg NATSConfig) (*NATS, error) {
	if cfg.MaxConsumers > 0 && cfg.Trust != nil {
		// With Trust each account's limits are its JWT's.
		return nil, errors.New("nats: MaxConsumers limits the one account of a server without Trust; set an account's limit in its JWT")
	}
	host, portStr, err := net.SplitHostPort(cfg.Listen)
	if err != nil {
		return nil, errors.Wrapf(err, "nats listen address %q", cfg.Listen)
	}
	port, err := strconv.Atoi(portStr)
	if err != nil {
		return nil, errors.Wrapf(err, "nats listen port %q", portStr)
	}
	if port == 0 {
		port = server.RANDOM_PORT
	}
	opts := &server.Options{
		Host:      host,
		Port:      port,
		JetStream: true,
		StoreDir:  cfg.StoreDir,
		NoSigs:    true,
		NoLog:     true,
		// Room for the largest spec plus headers; admission enforces the
		// spec limit itself and rejects with a reason.
		MaxPayload: 1 << 20,
	}
	if cfg.Trust != nil {
		if err := trustOperator(opts, *cfg.Trust); err != nil {
			return nil, err
		}
	}
	srv, err := server.NewServer(opts)
	if err != nil {
		return nil, errors.Wrap(err, "create nats server")
	}
	go srv.Start()
	if !srv.ReadyForConnections(30 * time.Second) {
		srv.Shutdown()
		return nil, errors.Newf("nats server on %s not ready after 30s", cfg.Listen)
	}
	if cfg.MaxConsumers > 0 {
		limits := server.JetStreamAccountLimits{MaxMemory: -1, MaxStore: -1, MaxStreams: -1, MaxConsumers: cfg.MaxConsumers}
		if err := srv.GlobalAccount().UpdateJetStreamLimits(map[string]server.JetStreamAccountLimits{"": limits}); err != nil {
			srv.Shutdown()
			return nil, errors.Wrap(err, "limit the account's consumers")
		}
	}
	return &NATS{srv: srv}, nil
}

// URL is the client URL of the server.
func (n *NATS) URL() string { return n.srv.ClientURL() }

// Close shuts the server down and waits for it.
func (n *NATS) Close() {
	n.srv.Shutdown()
	n.srv.WaitForShutdown()
}

// trustOperator puts the server in operator mode with the accounts resolved
// from memory: anonymous connections are refused and every user's
// permissions come from the JWT in its creds.
func trustOperator(opts *server.Options, t auth.ServerTrust) error {
	resolver := &server.MemAccResolver{}
	for pub, token := range t.Accounts {
		if err := resolver.Store(pub, token); err != nil {
			return errors.Wrapf(err, "store account %s", pub)
		}
	}
	opts.TrustedOperators = []*jwt.OperatorClaims{t.Operator}
	opts.SystemAccount = t.SystemAccount
	opts.AccountResolver = resolver
	return nil
}
