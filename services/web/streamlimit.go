package web

import (
	"fmt"
	"net/http"
	"sync"

	"github.com/lockstep-dev/lockstep/services/web/view"
)

// Bounds on the live streams (pages' updates, a job's output) open at
// once. Each holds a goroutine, a render buffer and, for output, a
// consumer on the bus, for as long as the page stays open: without a
// bound, one viewer with a script could open thousands.
const (
	maxStreamsPerViewer = 16
	maxStreams          = 512
)

// streamSlots counts the open streams, by viewer and in all.
type streamSlots struct {
	mu     sync.Mutex
	open   map[string]int
	total  int
	per    int
	across int
}

func newStreamSlots(per, across int) *streamSlots {
	return &streamSlots{open: map[string]int{}, per: per, across: across}
}

// take holds a slot for who ("": an unnamed viewer, bound by the total
// only), or says why there is none.
func (s *streamSlots) take(who string) (release func(), refused string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case who != "" && s.open[who] >= s.per:
		return nil, fmt.Sprintf("%d live views open for %s already: close some pages", s.per, who)
	case s.total >= s.across:
		return nil, fmt.Sprintf("the dashboard has %d live views open, its most: try again later", s.across)
	}
	s.open[who]++
	s.total++
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			s.total--
			if s.open[who]--; s.open[who] == 0 {
				delete(s.open, who)
			}
		})
	}, ""
}

// streaming holds a stream slot for the viewer while next runs. Without
// auth viewers have no name (and all come from loopback, or through one
// proxy): only the dashboard's total bounds them.
func (s *server) streaming(next viewerHandler) viewerHandler {
	return func(w http.ResponseWriter, r *http.Request, v view.Viewer) {
		release, refused := s.streams.take(v.Name)
		if refused != "" {
			http.Error(w, refused, http.StatusTooManyRequests)
			return
		}
		defer release()
		next(w, r, v)
	}
}
