package telemetry

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/cockroachdb/errors"
)

// Check is one readiness condition: nil when it holds.
type Check func(ctx context.Context) error

// Health is a process's readiness: the services it runs each add their
// checks (NATS connected, etcd reachable, consumers running) once they
// serve, and remove them when they stop. The process is ready when every
// required service (Require) and at least one service serves, and every
// check passes. Use NewHealth; a nil *Health ignores everything (tests).
type Health struct {
	mu       sync.Mutex
	next     int
	comps    map[int]component
	required []string
}

type component struct {
	name   string
	checks []Check
}

// NewHealth returns an empty Health (not ready).
func NewHealth() *Health { return &Health{comps: map[int]component{}} }

// Require makes readiness wait for each named service ("gang") to have
// added itself (as "gang" or "gang/<instance>"), so a process that runs
// several services is not ready while one of them is still starting.
func (h *Health) Require(services ...string) {
	if h == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.required = append(h.required, services...)
}

// Add registers a serving component and its checks; remove unregisters it.
func (h *Health) Add(name string, checks ...Check) (remove func()) {
	if h == nil {
		return func() {}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	id := h.next
	h.next++
	h.comps[id] = component{name: name, checks: checks}
	return func() {
		h.mu.Lock()
		delete(h.comps, id)
		h.mu.Unlock()
	}
}

// Status runs every check. It returns one line per component ("[+] gang
// ok", "[-] gang: nats: not connected") and an error when not ready.
func (h *Health) Status(ctx context.Context) ([]string, error) {
	if h == nil {
		return nil, errors.New("no health registry")
	}
	h.mu.Lock()
	comps := make([]component, 0, len(h.comps))
	for _, c := range h.comps {
		comps = append(comps, c)
	}
	required := h.required
	h.mu.Unlock()
	if len(comps) == 0 {
		return []string{"[-] no service is serving yet"}, errors.New("not ready: no service is serving yet")
	}
	sort.Slice(comps, func(i, j int) bool { return comps[i].name < comps[j].name })
	var lines, failed []string
	for _, svc := range required {
		serving := false
		for _, c := range comps {
			serving = serving || c.name == svc || strings.HasPrefix(c.name, svc+"/")
		}
		if !serving {
			lines = append(lines, "[-] "+svc+": not serving yet")
			failed = append(failed, svc)
		}
	}
	for _, c := range comps {
		var errs []string
		for _, check := range c.checks {
			if err := check(ctx); err != nil {
				errs = append(errs, err.Error())
			}
		}
		if len(errs) == 0 {
			lines = append(lines, "[+] "+c.name+" ok")
			continue
		}
		lines = append(lines, fmt.Sprintf("[-] %s: %s", c.name, strings.Join(errs, "; ")))
		failed = append(failed, c.name)
	}
	if len(failed) > 0 {
		return lines, errors.Newf("not ready: %s", strings.Join(failed, ", "))
	}
	return lines, nil
}
