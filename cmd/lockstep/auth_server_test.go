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
)

func TestAuthServerCertServesAndDials(t *testing.T) {
	dir, out := authority(t)
	if _, stderr, code := cli(t, "auth", "server-cert", "nats-1", "--dir", dir, "--hosts", "nats-1,127.0.0.1", "--out", out); code != 0 {
		t.Fatalf("server-cert: %d %s", code, stderr)
	}
	raw, err := os.ReadFile(filepath.Join(out, "nats-1.crt"))
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(raw)
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if cert.Subject.CommonName != "nats-1" || !slices.Equal(cert.DNSNames, []string{"nats-1"}) || len(cert.IPAddresses) != 1 {
		t.Errorf("certificate for %q, names %v, IPs %v", cert.Subject.CommonName, cert.DNSNames, cert.IPAddresses)
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
	} {
		if _, stderr, code := cli(t, args...); code == 0 || !strings.Contains(stderr, "no authority") {
			t.Errorf("%v: exit %d, stderr %q", args, code, stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(empty, "ca.key")); err == nil {
		t.Error("server-cert created an authority")
	}
	if _, _, code := cli(t, "auth", "server-cert", "etcd-1", "--dir", empty); code != 2 {
		t.Errorf("server-cert without --hosts: exit %d, want 2", code)
	}
}
