package main

import (
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
)

func TestAuthServerCertServesAndDials(t *testing.T) {
	dir, out := authority(t)
	if _, stderr, code := cli(t, "auth", "server-cert", "nats-1", "--dir", dir, "--hosts", "nats-1,127.0.0.1", "--out", out); code != 0 {
		t.Fatalf("server-cert: %d %s", code, stderr)
	}
	cert := readCert(t, filepath.Join(out, "nats-1.crt"))
	if !slices.Equal(cert.DNSNames, []string{"nats-1"}) || len(cert.IPAddresses) != 1 {
		t.Errorf("certificate for names %v, IPs %v", cert.DNSNames, cert.IPAddresses)
	}
	// etcd logs a client certificate in as the user its common name
	// names: a server's must name none, or its key would be that user's.
	if cn := cert.Subject.CommonName; domain.ValidUserName(cn) || !strings.Contains(cn, "nats-1") {
		t.Errorf("common name %q: an identity's name, or not the server's", cn)
	}
	// Routes and etcd peers dial each other with it: both usages.
	for _, u := range []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth} {
		if !slices.Contains(cert.ExtKeyUsage, u) {
			t.Errorf("usage %v missing from %v", u, cert.ExtKeyUsage)
		}
	}
	for _, f := range []string{"nats-1.key", "ca.crt"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "nats-1.creds")); err == nil {
		t.Error("a server certificate came with creds")
	}
}

func TestAuthNATSConfigIsIncludedByAServerConfig(t *testing.T) {
	dir, out := authority(t)
	trust := filepath.Join(out, "trust.conf")
	if _, stderr, code := cli(t, "auth", "nats-config", "--dir", dir, "--out", trust); code != 0 {
		t.Fatalf("nats-config: %d %s", code, stderr)
	}
	main := filepath.Join(out, "nats.conf")
	if err := os.WriteFile(main, []byte("listen: 127.0.0.1:-1\ninclude ./trust.conf\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	opts, err := server.ProcessConfigFile(main)
	if err != nil {
		t.Fatalf("nats-server rejects it: %v", err)
	}
	if len(opts.TrustedOperators) != 1 || opts.SystemAccount == "" {
		t.Errorf("operators %v, system account %q", opts.TrustedOperators, opts.SystemAccount)
	}
	stdout, _, code := cli(t, "auth", "nats-config", "--dir", dir)
	if code != 0 || !strings.Contains(stdout, "resolver: MEMORY") {
		t.Errorf("nats-config to stdout: %d %q", code, stdout)
	}
}

func TestAuthServerSubcommandsNeedAnAuthority(t *testing.T) {
	empty := t.TempDir()
	for _, args := range [][]string{
		{"auth", "server-cert", "etcd-1", "--dir", empty, "--hosts", "etcd-1"},
		{"auth", "nats-config", "--dir", empty},
		// A mistyped --dir must not make a second authority to issue from.
		{"auth", "issue", "alice", "--dir", empty, "--role", "user", "--out", t.TempDir()},
		{"auth", "enroll-node", "node-1", "--dir", empty, "--out", t.TempDir()},
	} {
		if _, stderr, code := cli(t, args...); code == 0 || !strings.Contains(stderr, "no authority") {
			t.Errorf("%v: exit %d, stderr %q", args, code, stderr)
		}
	}
	for _, f := range []string{"ca.key", "operator.nk", "account.nk"} {
		if _, err := os.Stat(filepath.Join(empty, f)); err == nil {
			t.Errorf("a command other than init created the authority's %s", f)
		}
	}
	if _, _, code := cli(t, "auth", "server-cert", "etcd-1", "--dir", empty); code != 2 {
		t.Errorf("server-cert without --hosts: exit %d, want 2", code)
	}
}

// Settings that would issue what nobody meant are refused before anything
// is written: a negative lifetime (creds that never expire), --etcd without
// the root certificate to act with. Hosts may be listed with spaces.
func TestAuthIssueChecksItsFlagsFirst(t *testing.T) {
	dir, out := authority(t)
	for _, args := range [][]string{
		{"auth", "issue", "bob", "--dir", dir, "--role", "user", "--out", out, "--ttl", "-24h"},
		{"auth", "server-cert", "etcd-1", "--dir", dir, "--hosts", "etcd-1", "--out", out, "--ttl", "-1h"},
		{"auth", "enroll-node", "node-9", "--dir", dir, "--out", out, "--etcd", "https://127.0.0.1:1"},
	} {
		if _, stderr, code := cli(t, args...); code != 2 || !strings.Contains(stderr, "--") {
			t.Errorf("%v: exit %d, %s; want a usage error naming the flag", args, code, stderr)
		}
	}
	for _, f := range []string{"bob.creds", "node-9.creds", "etcd-1.crt"} {
		if _, err := os.Stat(filepath.Join(out, f)); err == nil {
			t.Errorf("%s written by a refused command", f)
		}
	}
	if _, stderr, code := cli(t, "auth", "issue", "gw", "--dir", dir, "--role", "user", "--out", out, "--server-hosts", "gw-1, 10.0.0.5"); code != 0 {
		t.Fatalf("issue --server-hosts: %d %s", code, stderr)
	}
	cert := readCert(t, filepath.Join(out, "gw.crt"))
	if !slices.Equal(cert.DNSNames, []string{"gw-1"}) || len(cert.IPAddresses) != 1 || cert.Subject.CommonName != "user:gw" {
		t.Errorf("certificate %q for names %q, IPs %v", cert.Subject.CommonName, cert.DNSNames, cert.IPAddresses)
	}
}

// readCert reads the PEM certificate at path.
func readCert(t *testing.T, path string) *x509.Certificate {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(raw)
	if block == nil {
		t.Fatalf("%s holds no PEM block", path)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return cert
}
