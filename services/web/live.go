package web

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/lockstep-dev/lockstep/services/web/view"
	"github.com/lockstep-dev/lockstep/shared/contract/jobspec"
	"github.com/lockstep-dev/lockstep/shared/plumbing/bus"
)

// live streams a page's live part: now, then after every change the hub
// announces, until the viewer leaves.
func (s *server) live(w http.ResponseWriter, r *http.Request, v view.Viewer) {
	var model func() any
	switch page := r.PathValue("page"); page {
	case "fabric":
		model = func() any { return s.fabricModel() }
	case "queue":
		model = func() any { return s.queueModel() }
	case "cluster":
		model = func() any { return s.clusterModel() }
	default:
		http.NotFound(w, r)
		return
	}
	page := r.PathValue("page")
	render := func(w io.Writer) error {
		// Read before the models: a change after it makes the next
		// generation, which renders again.
		gen := s.hub.generation()
		return s.shared.render(w, page, gen, func(w io.Writer) error {
			return s.pages.live(w, page, pageData{Viewer: v, Body: model()})
		})
	}
	s.stream(w, r, render)
}

// liveJob streams a job page's live part.
func (s *server) liveJob(w http.ResponseWriter, r *http.Request, v view.Viewer) {
	id := r.PathValue("id")
	if !jobspec.ValidID(id) {
		http.Error(w, "not a job ID", http.StatusBadRequest)
		return
	}
	s.stream(w, r, func(w io.Writer) error {
		p, found, err := s.jobModel(r.Context(), id, v)
		if err != nil {
			return err
		}
		if !found {
			return fmt.Errorf("no job %s", id)
		}
		return s.pages.live(w, "job", pageData{Viewer: v, Body: p})
	})
}

// stream is the Server-Sent Events loop of one page.
func (s *server) stream(w http.ResponseWriter, r *http.Request, render func(io.Writer) error) {
	flusher, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	// Subscribed before the first render, so a change between the two is
	// not missed.
	changed, stop := s.hub.subscribe()
	defer stop()
	startEvents(w)
	var buf bytes.Buffer
	for {
		buf.Reset()
		if err := render(&buf); err != nil {
			if r.Context().Err() == nil {
				s.Log.Warn("web: live update", "path", r.URL.Path, "err", err)
			}
			return
		}
		if err := writeEvent(w, "update", buf.String()); err != nil {
			return
		}
		flusher.Flush()
		select {
		case <-r.Context().Done():
			return
		case <-changed:
		}
	}
}

// startEvents sends the headers of an event stream.
func startEvents(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
}

// writeEvent writes one event; each line of data is a data: line (the
// browser joins them with newlines), and a carriage return, which would
// end a line early, is dropped.
func writeEvent(w io.Writer, name, data string) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "event: %s\n", name)
	for line := range strings.SplitSeq(strings.ReplaceAll(data, "\r", ""), "\n") {
		bw.WriteString("data: ")
		bw.WriteString(line)
		bw.WriteByte('\n')
	}
	bw.WriteByte('\n')
	return bw.Flush()
}

// logs streams one rank's output, every line so far and then each new
// one, as "line" events.
func (s *server) logs(w http.ResponseWriter, r *http.Request, v view.Viewer) {
	id := r.PathValue("id")
	rank, err := strconv.Atoi(r.URL.Query().Get("rank"))
	if !jobspec.ValidID(id) || err != nil || rank < 0 {
		http.Error(w, "want /jobs/ID/logs?rank=N with a job ID and a rank ≥ 0", http.StatusBadRequest)
		return
	}
	j, found, err := s.record(r.Context(), id)
	switch {
	case err != nil:
		http.Error(w, "read job "+id+": "+err.Error(), http.StatusBadGateway)
		return
	case !found:
		http.Error(w, "no job "+id, http.StatusNotFound)
		return
	}
	if !v.MayRead(j.Owner) {
		http.Error(w, "refused: only the job's owner, admins and operators read its output", http.StatusForbidden)
		return
	}
	flusher, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	cons, err := s.reader("").Logs(r.Context(), id, rank)
	if err != nil {
		http.Error(w, "could not read the output: "+err.Error(), http.StatusBadGateway)
		return
	}
	defer cons.Close()
	it, err := cons.Messages()
	if err != nil {
		http.Error(w, "could not read the output: "+err.Error(), http.StatusBadGateway)
		return
	}
	defer it.Stop()
	stop := context.AfterFunc(r.Context(), it.Stop)
	defer stop()
	startEvents(w)
	flusher.Flush()
	for {
		msg, err := it.Next()
		if err != nil {
			return
		}
		if bus.Replayed(msg.Headers()) {
			continue // a direct get's answer stored on the job's log subject: no rank wrote it
		}
		if writeEvent(w, "line", strings.TrimRight(string(msg.Data()), "\n")) != nil {
			return
		}
		flusher.Flush()
	}
}
