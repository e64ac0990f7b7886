package auth

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/cockroachdb/errors"

	"github.com/lockstep-dev/lockstep/shared/plumbing/atomicfile"
)

// CA is a cluster's certificate authority for TLS on every hop (NATS
// clients and routes, etcd clients and peers) and for etcd's client
// certificate auth, where a certificate's common name is the etcd user.
type CA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	// PEM is the CA certificate, what every client and server trusts.
	PEM []byte
}

// CA file names in an authority's directory.
const (
	caCertFile = "ca.crt"
	caKeyFile  = "ca.key"
)

// LoadOrCreateCA reads the CA kept in dir, or creates one (valid ten
// years) when dir holds none.
func LoadOrCreateCA(dir string, now time.Time) (*CA, error) {
	certPath, keyPath := filepath.Join(dir, caCertFile), filepath.Join(dir, caKeyFile)
	_, certErr := os.Stat(certPath)
	_, keyErr := os.Stat(keyPath)
	switch {
	case certErr == nil && keyErr == nil:
		return loadCA(certPath, keyPath)
	case certErr == nil || keyErr == nil:
		return nil, errors.Newf("CA in %s is incomplete (one of %s, %s is missing)", dir, caCertFile, caKeyFile)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, errors.Wrap(err, "generate CA key")
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "lockstep CA", Organization: []string{"lockstep"}},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(10 * 365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, errors.Wrap(err, "sign CA certificate")
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, errors.Wrap(err, "parse CA certificate")
	}
	keyPEM, err := encodeKey(key)
	if err != nil {
		return nil, err
	}
	ca := &CA{cert: cert, key: key, PEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
	if err := writeSecret(keyPath, keyPEM); err != nil {
		return nil, err
	}
	return ca, writePublic(certPath, ca.PEM)
}

func loadCA(certPath, keyPath string) (*CA, error) {
	certPEM, err := os.ReadFile(certPath)
	if err != nil {
		return nil, errors.Wrapf(err, "read %s", certPath)
	}
	block, _ := pem.Decode(certPEM)
	if block == nil || block.Type != "CERTIFICATE" {
		return nil, errors.Newf("%s: no PEM certificate", certPath)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return nil, errors.Wrapf(err, "parse %s", certPath)
	}
	keyPEM, err := os.ReadFile(keyPath)
	if err != nil {
		return nil, errors.Wrapf(err, "read %s", keyPath)
	}
	kb, _ := pem.Decode(keyPEM)
	if kb == nil {
		return nil, errors.Newf("%s: no PEM key", keyPath)
	}
	key, err := x509.ParseECPrivateKey(kb.Bytes)
	if err != nil {
		return nil, errors.Wrapf(err, "parse %s", keyPath)
	}
	if !key.PublicKey.Equal(cert.PublicKey) {
		return nil, errors.Newf("%s does not belong to %s", keyPath, certPath)
	}
	return &CA{cert: cert, key: key, PEM: certPEM}, nil
}

// CertUsage says what a certificate is for.
type CertUsage int

const (
	// UsageClient authenticates a client (etcd maps its common name to a user).
	UsageClient CertUsage = 1 << iota
	// UsageServer serves TLS for the given hosts.
	UsageServer
)

// KeyPair is an issued certificate and its private key, in PEM.
type KeyPair struct {
	CertPEM, KeyPEM []byte
}

// ServerCommonName is the common name of server name's certificate. etcd
// takes the common name of a client certificate for the user it logs in
// as, and a server's certificate is good for clients too (etcd peers and
// NATS routes dial with it), so its name must be no user's: the prefix
// holds a character no identity name may have.
func ServerCommonName(name string) string { return "server:" + name }

// Issue signs a certificate for commonName. hosts (DNS names or IPs) go
// into the subject alternative names of a server certificate.
func (ca *CA) Issue(commonName string, hosts []string, usage CertUsage, ttl time.Duration, now time.Time) (KeyPair, error) {
	if commonName == "" {
		return KeyPair{}, errors.New("certificate common name is empty")
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return KeyPair{}, errors.Wrap(err, "generate key")
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: commonName, Organization: []string{"lockstep"}},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(ttl),
		KeyUsage:     x509.KeyUsageDigitalSignature,
	}
	if usage&UsageClient != 0 {
		tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageClientAuth)
	}
	if usage&UsageServer != 0 {
		tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageServerAuth)
		for _, h := range hosts {
			if ip := net.ParseIP(h); ip != nil {
				tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
			} else {
				tmpl.DNSNames = append(tmpl.DNSNames, h)
			}
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		return KeyPair{}, errors.Wrapf(err, "sign certificate for %s", commonName)
	}
	keyPEM, err := encodeKey(key)
	if err != nil {
		return KeyPair{}, err
	}
	return KeyPair{CertPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), KeyPEM: keyPEM}, nil
}

// TLSFiles names a CA, a certificate and its key on disk, as every
// service, agent and CLI command takes them.
type TLSFiles struct {
	CA, Cert, Key string
}

// WriteFiles writes kp and the CA certificate into dir as <name>.crt,
// <name>.key and ca.crt.
func (ca *CA) WriteFiles(dir, name string, kp KeyPair) (TLSFiles, error) {
	f := TLSFiles{CA: filepath.Join(dir, caCertFile), Cert: filepath.Join(dir, name+".crt"), Key: filepath.Join(dir, name+".key")}
	if err := writePublic(f.CA, ca.PEM); err != nil {
		return TLSFiles{}, err
	}
	if err := writePublic(f.Cert, kp.CertPEM); err != nil {
		return TLSFiles{}, err
	}
	return f, writeSecret(f.Key, kp.KeyPEM)
}

func encodeKey(key *ecdsa.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, errors.Wrap(err, "encode key")
	}
	return pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), nil
}

// serial is a random 128-bit serial number, as RFC 5280 advises.
func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		// crypto/rand does not fail on Linux; a fixed serial would still
		// make a valid (if not unique) certificate.
		return big.NewInt(1)
	}
	return n
}

// writePublic writes data that anyone may read (a certificate) the same
// way as writeSecret.
func writePublic(path string, data []byte) error { return atomicfile.Write(path, data, 0o755, 0o644) }
