package view

// Viewer is who looks at a page.
type Viewer struct {
	// AuthOn says the cluster has authentication: without it the dashboard
	// is read-only, as no one can be told apart.
	AuthOn bool
	// Name and Role are the signed-in identity ("" when no one is).
	Name, Role string
	// CSRF is the token the page's forms carry back (see the web service).
	CSRF string
}

// SignedIn reports whether an identity is signed in.
func (v Viewer) SignedIn() bool { return v.Name != "" }

// Privileged reports whether the viewer acts on everyone's jobs, as the
// drain service obeys admins and operators.
func (v Viewer) Privileged() bool { return v.Role == "admin" || v.Role == "operator" }

// MayAct says whether the viewer may cancel or checkpoint a job of owner:
// on a cluster with auth, a signed-in owner, admin or operator; on one
// without, no one (read-only). The drain service checks the same again
// against the job record when the request arrives: this only decides
// which buttons a page shows and which requests the web service forwards.
func (v Viewer) MayAct(owner string) bool {
	return v.AuthOn && v.SignedIn() && (v.Privileged() || v.Name == owner)
}

// MayRead says whether the viewer may read a job's events and output:
// everyone without auth; with it, as the bus permits (the owner, admins
// and operators).
func (v Viewer) MayRead(owner string) bool {
	return !v.AuthOn || v.SignedIn() && (v.Privileged() || v.Name == owner)
}
