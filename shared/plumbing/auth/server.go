package auth

import (
	"github.com/cockroachdb/errors"
	"github.com/nats-io/jwt/v2"
)

// ServerTrust is what a NATS server needs to check Lockstep's credentials:
// the operator it trusts and the account JWTs it resolves, from memory.
type ServerTrust struct {
	Operator *jwt.OperatorClaims
	// OperatorJWT is Operator as signed, what a server's config file names.
	OperatorJWT string
	// SystemAccount is the system account's public key.
	SystemAccount string
	// Accounts maps each account's public key to its signed JWT.
	Accounts map[string]string
}

// Trust signs the operator and account JWTs. The LOCKSTEP account has
// JetStream without limits of its own: streams bound themselves.
func (a *Authority) Trust() (ServerTrust, error) {
	opPub, err := a.operator.PublicKey()
	if err != nil {
		return ServerTrust{}, errors.Wrap(err, "operator key")
	}
	sysPub, err := a.system.PublicKey()
	if err != nil {
		return ServerTrust{}, errors.Wrap(err, "system account key")
	}
	accPub, err := a.account.PublicKey()
	if err != nil {
		return ServerTrust{}, errors.Wrap(err, "account key")
	}
	op := jwt.NewOperatorClaims(opPub)
	op.Name = "lockstep"
	op.SystemAccount = sysPub
	opJWT, err := op.Encode(a.operator)
	if err != nil {
		return ServerTrust{}, errors.Wrap(err, "sign operator")
	}
	// The server wants the decoded claims, as it would read them from a file.
	opClaims, err := jwt.DecodeOperatorClaims(opJWT)
	if err != nil {
		return ServerTrust{}, errors.Wrap(err, "decode operator")
	}
	sys := jwt.NewAccountClaims(sysPub)
	sys.Name = systemAccountName
	sysJWT, err := sys.Encode(a.operator)
	if err != nil {
		return ServerTrust{}, errors.Wrap(err, "sign system account")
	}
	acc := jwt.NewAccountClaims(accPub)
	acc.Name = AccountName
	acc.Limits.JetStreamLimits = jwt.JetStreamLimits{MemoryStorage: -1, DiskStorage: -1, Streams: -1, Consumer: -1}
	accJWT, err := acc.Encode(a.operator)
	if err != nil {
		return ServerTrust{}, errors.Wrap(err, "sign account")
	}
	return ServerTrust{
		Operator:      opClaims,
		OperatorJWT:   opJWT,
		SystemAccount: sysPub,
		Accounts:      map[string]string{sysPub: sysJWT, accPub: accJWT},
	}, nil
}
