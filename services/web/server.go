package web

import (
	"context"
	"crypto/subtle"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/lockstep-dev/lockstep/services/web/view"
	"github.com/lockstep-dev/lockstep/shared/plumbing/config"
)

// sessionCookie holds the viewer's sign-in token.
const sessionCookie = "lockstep_session"

// server is one replica's HTTP side.
type server struct {
	*config.Started
	cfg    Config
	hub    *hub
	state  *state
	verify *verifier // nil without auth
	pages  *pages
	shared sharedRenders
	// streams bounds the live streams open at once (streaming).
	streams *streamSlots
}

// routes is the dashboard's URL space.
func (s *server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(staticFS())))
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/fabric", http.StatusSeeOther) })
	mux.HandleFunc("GET /signin", s.signinForm)
	mux.HandleFunc("POST /signin", s.signin)
	mux.HandleFunc("POST /signout", s.viewing(s.signout))
	mux.HandleFunc("GET /fabric", s.viewing(s.fabricPage))
	mux.HandleFunc("GET /queue", s.viewing(s.queuePage))
	mux.HandleFunc("GET /cluster", s.viewing(s.clusterPage))
	mux.HandleFunc("GET /jobs/{id}", s.viewing(s.jobPage))
	mux.HandleFunc("GET /live/{page}", s.viewing(s.streaming(s.live)))
	mux.HandleFunc("GET /live/jobs/{id}", s.viewing(s.streaming(s.liveJob)))
	mux.HandleFunc("GET /jobs/{id}/logs", s.viewing(s.streaming(s.logs)))
	mux.HandleFunc("POST /jobs/{id}/cancel", s.viewing(s.act(actionCancel)))
	mux.HandleFunc("POST /jobs/{id}/checkpoint", s.viewing(s.act(actionCheckpoint)))
	var h http.Handler = mux
	switch {
	case s.verify != nil:
		// Signed-in sessions: a rebound name gets no cookie.
	case !s.cfg.AllowRemote:
		h = hostsOnly(h, nil, false, "localhost (no auth on this cluster)")
	default:
		h = hostsOnly(h, s.cfg.PublicHosts, true, "localhost, an IP address or a --public-host name (no auth on this cluster)")
	}
	return secureHeaders(h)
}

// hostsOnly answers only requests whose Host is this machine's loopback
// (localhost, 127.0.0.1, [::1]), one of names, or, with anyIP, an IP
// address. Without auth anyone who reaches the dashboard reads every job,
// and a page elsewhere that rebinds its own DNS name to the dashboard's
// address would be reached through its visitors' browsers: such a request
// names the page's own host, which is none of these.
func hostsOnly(next http.Handler, names []string, anyIP bool, says string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host := r.Host
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
		host = strings.Trim(host, "[]")
		ok := isLoopback(host) || (anyIP && net.ParseIP(host) != nil) || slices.ContainsFunc(names, func(n string) bool { return strings.EqualFold(n, host) })
		if !ok {
			http.Error(w, "this dashboard answers only for "+says, http.StatusMisdirectedRequest)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// secureHeaders keeps the pages from being framed, sniffed or made to run
// script from anywhere but here.
func secureHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; frame-ancestors 'none'; form-action 'self'")
		h.Set("X-Frame-Options", "DENY")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "same-origin")
		next.ServeHTTP(w, r)
	})
}

// viewerHandler is a handler that knows who is looking.
type viewerHandler func(w http.ResponseWriter, r *http.Request, v view.Viewer)

// viewing resolves the viewer from the session cookie. On a cluster with
// auth, a request without a valid session is sent to sign in (pages) or
// refused (everything else).
func (s *server) viewing(next viewerHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		v := view.Viewer{AuthOn: s.verify != nil}
		if s.verify == nil {
			next(w, r, v)
			return
		}
		if c, err := r.Cookie(sessionCookie); err == nil {
			id, err := s.verify.Verify(c.Value, s.cfg.Now())
			if err == nil {
				v.Name, v.Role, v.CSRF = id.Name, id.Role, csrfFor(c.Value)
				// A live stream checked once at its start must not outlive
				// the token: the request ends when the token does.
				ctx, cancel := context.WithDeadline(r.Context(), id.Expires)
				defer cancel()
				next(w, r.WithContext(ctx), v)
				return
			}
			s.Log.Info("web: session refused", "err", err)
		}
		if r.Method == http.MethodGet && r.Header.Get("Accept") != "text/event-stream" {
			http.Redirect(w, r, "/signin?next="+url.QueryEscape(r.URL.Path), http.StatusSeeOther)
			return
		}
		http.Error(w, "sign in first (lockstep web token)", http.StatusUnauthorized)
	}
}

// checkForm refuses a POST that did not come from one of this site's own
// forms: its Origin, when the browser sent one, must be this host, and on
// a cluster with auth its csrf field must be the session's. It bounds the
// body first: the form parser would otherwise hold 32 MiB of it and spool
// the rest to disk.
func checkForm(w http.ResponseWriter, r *http.Request, v view.Viewer) bool {
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if o := r.Header.Get("Origin"); o != "" {
		u, err := url.Parse(o)
		if err != nil || u.Host != r.Host {
			return false
		}
	}
	if !v.AuthOn {
		return true
	}
	got := r.PostFormValue("csrf")
	return v.CSRF != "" && subtle.ConstantTimeCompare([]byte(got), []byte(v.CSRF)) == 1
}
