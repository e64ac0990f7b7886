package auth

import (
	"strings"
	"testing"

	"github.com/nats-io/nats-server/v2/server"
)

// The rendered config is one nats-server itself reads back into the trust
// it came from.
func TestNATSConfigIsReadByTheServer(t *testing.T) {
	a, err := NewAuthority()
	if err != nil {
		t.Fatal(err)
	}
	trust, err := a.Trust()
	if err != nil {
		t.Fatal(err)
	}
	conf, err := trust.NATSConfig()
	if err != nil {
		t.Fatal(err)
	}
	path := t.TempDir() + "/trust.conf"
	if err := writePublic(path, conf); err != nil {
		t.Fatal(err)
	}
	opts, err := server.ProcessConfigFile(path)
	if err != nil {
		t.Fatalf("nats-server rejects the config: %v\n%s", err, conf)
	}
	if len(opts.TrustedOperators) != 1 || opts.TrustedOperators[0].Subject != trust.Operator.Subject {
		t.Errorf("trusted operators %v, want %s", opts.TrustedOperators, trust.Operator.Subject)
	}
	if opts.SystemAccount != trust.SystemAccount {
		t.Errorf("system account %q, want %q", opts.SystemAccount, trust.SystemAccount)
	}
	if !strings.Contains(string(conf), "resolver: MEMORY") {
		t.Errorf("no memory resolver in\n%s", conf)
	}
	// The resolver itself is built when the server starts: start one on a
	// random port and check that the accounts resolve.
	opts.Port, opts.HTTPPort, opts.NoLog, opts.NoSigs = server.RANDOM_PORT, -1, true, true
	s, err := server.NewServer(opts)
	if err != nil {
		t.Fatalf("server from the config: %v", err)
	}
	for pub := range trust.Accounts {
		if _, err := s.LookupAccount(pub); err != nil {
			t.Errorf("account %s does not resolve: %v", pub, err)
		}
	}
}

func TestNATSConfigNeedsAnOperator(t *testing.T) {
	if _, err := (ServerTrust{}).NATSConfig(); err == nil {
		t.Error("empty trust rendered a config")
	}
}
