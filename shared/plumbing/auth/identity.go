package auth

import (
	"github.com/cockroachdb/errors"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
)

// Role is what an identity may do. Services get one identity per kind,
// nodes one each, people one each.
type Role string

const (
	// RoleAdmin may do anything, on every job and node.
	RoleAdmin Role = "admin"
	// RoleOperator manages nodes (drain, resume, enroll) and may read every
	// job's events and logs; it submits as itself like a user.
	RoleOperator Role = "operator"
	// RoleUser submits, cancels and reads their own jobs.
	RoleUser Role = "user"
	// RoleNode is one agent: it registers itself and reports on its own
	// assignments only.
	RoleNode Role = "node"
	// Service roles: one per service kind.
	RoleAdmission Role = "admission"
	RolePlacement Role = "placement"
	RoleGang      Role = "gang"
	RoleDrain     Role = "drain"
)

// Roles lists every role, for help text and validation.
var roles = []Role{RoleAdmin, RoleOperator, RoleUser, RoleNode, RoleAdmission, RolePlacement, RoleGang, RoleDrain}

// Roles returns every role.
func Roles() []Role { return append([]Role(nil), roles...) }

// ParseRole checks a role name.
func ParseRole(s string) (Role, error) {
	for _, r := range roles {
		if string(r) == s {
			return r, nil
		}
	}
	return "", errors.Newf("role %q: must be one of %v", s, roles)
}

// IsPerson reports whether r is a person's role: someone who signs in
// (the dashboard) and owns jobs, as opposed to a node or a service.
func (r Role) IsPerson() bool {
	switch r {
	case RoleUser, RoleAdmin, RoleOperator:
		return true
	}
	return false
}

// IsService reports whether r is one of the services' roles.
func (r Role) IsService() bool {
	switch r {
	case RoleAdmission, RolePlacement, RoleGang, RoleDrain:
		return true
	}
	return false
}

// Identity is who connects: a name and what it may do. For a node the name
// is the node's name; for a service, the service kind.
type Identity struct {
	Name string
	Role Role
}

// Validate checks the identity's name and role.
func (id Identity) Validate() error {
	if _, err := ParseRole(string(id.Role)); err != nil {
		return err
	}
	if !domain.ValidUserName(id.Name) {
		return errors.Newf("identity name %q: must be 1-63 of a-z, 0-9, '_' and '-', starting with a letter or digit", id.Name)
	}
	if id.Role.IsService() && id.Name != string(id.Role) {
		return errors.Newf("identity %q: a service identity is named after its service (%q)", id.Name, id.Role)
	}
	// The services' names, and etcd's root, are theirs alone: an identity
	// of another role so named would get their inbox on the bus (their
	// replies) and, from a certificate of that name, their etcd user.
	switch {
	case Role(id.Name).IsService() && id.Role != Role(id.Name):
		return errors.Newf("identity %q: the name is the %s service's alone", id.Name, id.Name)
	case id.Name == "root" && id.Role != RoleAdmin:
		return errors.Newf("identity %q: the name is etcd's root user's; only an admin may have it", id.Name)
	}
	return nil
}

// CertName is the common name of id's TLS client certificate, which etcd
// takes for its user (etcdauth.ApplyEtcd names the user so). A service's or a
// node's is its name: services' names are theirs alone (Validate), and no
// node is named like one. Everyone else's carries the role, "role:name",
// which no bare name can be (names have no ':'): an admin named like a
// node is another etcd user than the node, so the node's certificate never
// logs in with the admin's root, and a person, who has no etcd user at
// all, never acts as a node of their name.
func CertName(id Identity) string {
	if id.Role.IsService() || id.Role == RoleNode {
		return id.Name
	}
	return string(id.Role) + ":" + id.Name
}

// InboxPrefix is where replies to this identity's requests arrive. Each
// identity gets its own, so no one can subscribe to another's replies. It
// is named as the identity's certificate is (CertName): a person's carries
// the role ("_INBOX_user:alice"), so a person named like a node or an
// admin never reads that identity's replies. (Creds Lockstep did not
// issue name no role: their inbox is the name's.)
func (id Identity) InboxPrefix() string {
	if id.Role == "" {
		return "_INBOX_" + id.Name
	}
	return "_INBOX_" + CertName(id)
}
