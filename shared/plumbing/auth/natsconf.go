package auth

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"

	"github.com/cockroachdb/errors"
	"github.com/nats-io/jwt/v2"
)

// NATSConfig renders t as nats-server configuration: the trusted operator,
// the system account and every account JWT preloaded into a memory
// resolver. A server that includes it runs in operator mode, as `lockstep
// dev`'s embedded one does: anonymous clients are refused and each user's
// permissions come from its creds. It holds no secret (JWTs are signed
// public claims), but it is what decides whom the server trusts.
func (t ServerTrust) NATSConfig() ([]byte, error) {
	if t.OperatorJWT == "" || t.SystemAccount == "" {
		return nil, errors.New("server trust has no operator JWT or system account")
	}
	if _, ok := t.Accounts[t.SystemAccount]; !ok {
		return nil, errors.Newf("server trust does not resolve its system account %s", t.SystemAccount)
	}
	var b bytes.Buffer
	b.WriteString("# NATS operator mode for Lockstep, written by `lockstep auth nats-config`.\n")
	fmt.Fprintf(&b, "operator: %s\n", strconv.Quote(t.OperatorJWT))
	fmt.Fprintf(&b, "system_account: %s\n", strconv.Quote(t.SystemAccount))
	b.WriteString("resolver: MEMORY\n")
	b.WriteString("resolver_preload: {\n")
	keys := make([]string, 0, len(t.Accounts))
	for k := range t.Accounts {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		name := k
		if c, err := jwt.DecodeAccountClaims(t.Accounts[k]); err == nil && c.Name != "" {
			name = c.Name
		}
		fmt.Fprintf(&b, "  # %s\n  %s: %s\n", name, strconv.Quote(k), strconv.Quote(t.Accounts[k]))
	}
	b.WriteString("}\n")
	return b.Bytes(), nil
}
