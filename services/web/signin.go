package web

import (
	"net/http"
	"strings"

	"github.com/lockstep-dev/lockstep/services/web/view"
)

// maxFormBytes bounds any form's body (checkForm): the largest, sign-in,
// holds a token, a user JWT and a signature, well under this.
const maxFormBytes = 16 << 10

// safeNext is where sign-in returns to: a path on this site, never
// another site ("//host" is one, and so is "/\t/host": browsers drop tabs
// and newlines from a URL, so no control character may pass).
func safeNext(next string) string {
	if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.ContainsRune(next, '\\') ||
		strings.ContainsFunc(next, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return "/fabric"
	}
	return next
}

func (s *server) signinForm(w http.ResponseWriter, r *http.Request) {
	if s.verify == nil {
		http.Redirect(w, r, "/fabric", http.StatusSeeOther)
		return
	}
	s.pages.render(w, "signin", pageData{Title: "Sign in", Viewer: view.Viewer{AuthOn: true}, Next: safeNext(r.URL.Query().Get("next"))}, http.StatusOK)
}

// signin checks the pasted token and keeps it in an HttpOnly, SameSite
// cookie: the session is the token itself, so every replica checks it
// alike and none keeps state.
func (s *server) signin(w http.ResponseWriter, r *http.Request) {
	if s.verify == nil {
		http.Redirect(w, r, "/fabric", http.StatusSeeOther)
		return
	}
	if !checkForm(w, r, view.Viewer{}) {
		http.Error(w, "refused: the form did not come from this dashboard's own page", http.StatusForbidden)
		return
	}
	token := strings.TrimSpace(r.PostFormValue("token"))
	next := safeNext(r.PostFormValue("next"))
	id, err := s.verify.Verify(token, s.cfg.Now())
	if err != nil {
		s.Log.Info("web: sign-in refused", "err", err)
		s.pages.render(w, "signin", pageData{Title: "Sign in", Viewer: view.Viewer{AuthOn: true}, Next: next,
			Body: "That token was refused (expired, or not from this cluster's credentials). Make a new one with `lockstep web token`."}, http.StatusUnauthorized)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: token, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
	s.Log.Info("web: signed in", "name", id.Name, "role", id.Role)
	http.Redirect(w, r, next, http.StatusSeeOther)
}

func (s *server) signout(w http.ResponseWriter, r *http.Request, v view.Viewer) {
	if !checkForm(w, r, v) {
		http.Error(w, "refused: the form did not come from this dashboard's own page", http.StatusForbidden)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: "", Path: "/", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteStrictMode})
	http.Redirect(w, r, "/signin", http.StatusSeeOther)
}
