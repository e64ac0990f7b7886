package web

import (
	"context"
	"net/http"

	"github.com/lockstep-dev/lockstep/services/web/view"
	"github.com/lockstep-dev/lockstep/shared/contract/client"
	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/errs"
	"github.com/lockstep-dev/lockstep/shared/contract/events"
	"github.com/lockstep-dev/lockstep/shared/contract/jobspec"
	"github.com/lockstep-dev/lockstep/shared/plumbing/telemetry"
)

// The page models, each from what the replica follows now.

func (s *server) fabricModel() view.Fabric {
	return view.BuildFabric(s.state.fabricInput(s.cfg.CollapseAbove))
}

func (s *server) queueModel() view.Queue {
	return view.BuildQueue(view.QueueInput{Jobs: s.state.jobList(), Policy: s.cfg.Queues, Now: s.cfg.Now()})
}

func (s *server) clusterModel() view.Cluster {
	return view.BuildCluster(view.ClusterInput{Samples: s.state.history(), Jobs: s.state.jobList(), Ended: s.state.endedList(), Fabric: s.fabricModel(), Now: s.cfg.Now()})
}

// record is job id's record from the follower, or from the KV for a
// finished job (the follower keeps little of those) or one it has not
// delivered yet (a job submitted a moment ago); found is false when there
// is none.
func (s *server) record(ctx context.Context, id string) (j domain.Job, found bool, err error) {
	if j, ok := s.state.job(id); ok {
		return j, true, nil
	}
	j, _, err = s.Jobs.Get(ctx, id)
	if errs.IsNotFound(err) {
		return j, false, nil
	}
	return j, err == nil, err
}

// jobModel is job id's page; found is false when there is no such record.
func (s *server) jobModel(ctx context.Context, id string, v view.Viewer) (p view.JobPage, found bool, err error) {
	j, found, err := s.record(ctx, id)
	if !found || err != nil {
		return p, found, err
	}
	var evs []events.Event
	if v.MayRead(j.Owner) {
		if evs, err = s.reader("").Events(ctx, id); err != nil {
			return p, true, err
		}
	}
	in := view.JobInput{Job: j, Events: evs, Now: s.cfg.Now(), Viewer: v, TraceURL: s.cfg.TraceURL}
	if v.MayRead(j.Owner) {
		in.Traces = s.jobTraces(id)
	}
	return view.BuildJob(in), true, nil
}

// jobTraces reads the job's traces from the span file, if there is one.
// A file not written yet, or unreadable, leaves the page without its
// waterfall rather than failing it: the trace is an extra.
func (s *server) jobTraces(id string) []telemetry.JobTrace {
	if s.cfg.SpanFile == "" {
		return nil
	}
	all, err := telemetry.ReadSpanFile(s.cfg.SpanFile)
	if err != nil {
		s.Log.Debug("no spans for the job page", "file", s.cfg.SpanFile, "err", err)
		return nil
	}
	return telemetry.JobTraces(all, id)
}

// reader is a client on the replica's own connection acting as user (""
// for reads, which name no one).
func (s *server) reader(user string) *client.Client {
	return client.Over(s.Bus, s.Jobs, user)
}

func (s *server) fabricPage(w http.ResponseWriter, _ *http.Request, v view.Viewer) {
	s.pages.render(w, "fabric", pageData{Title: "Fabric", Nav: "fabric", Viewer: v, Live: "/live/fabric", Body: s.fabricModel()}, http.StatusOK)
}

func (s *server) queuePage(w http.ResponseWriter, _ *http.Request, v view.Viewer) {
	s.pages.render(w, "queue", pageData{Title: "Queue", Nav: "queue", Viewer: v, Live: "/live/queue", Body: s.queueModel()}, http.StatusOK)
}

func (s *server) clusterPage(w http.ResponseWriter, _ *http.Request, v view.Viewer) {
	s.pages.render(w, "cluster", pageData{Title: "Cluster", Nav: "cluster", Viewer: v, Live: "/live/cluster", Body: s.clusterModel()}, http.StatusOK)
}

func (s *server) jobPage(w http.ResponseWriter, r *http.Request, v view.Viewer) {
	id := r.PathValue("id")
	if !jobspec.ValidID(id) {
		http.Error(w, "not a job ID", http.StatusBadRequest)
		return
	}
	p, found, err := s.jobModel(r.Context(), id, v)
	switch {
	case err != nil:
		s.Log.Warn("web: job page", "job", id, "err", err)
		http.Error(w, "could not read the job: "+err.Error(), http.StatusBadGateway)
	case !found:
		http.Error(w, "no job "+id, http.StatusNotFound)
	default:
		s.pages.render(w, "job", pageData{Title: id, Viewer: v, Live: "/live/jobs/" + id, Body: p}, http.StatusOK)
	}
}

// action is what a job's buttons ask for.
type action int

const (
	actionCancel action = iota
	actionCheckpoint
)

// act forwards a cancel or checkpoint on the viewer's own subjects, after
// checking, against the job record in the KV, that the viewer may: the
// drain service checks again when it receives it.
func (s *server) act(a action) viewerHandler {
	return func(w http.ResponseWriter, r *http.Request, v view.Viewer) {
		if !checkForm(w, r, v) {
			http.Error(w, "refused: the form did not come from this dashboard's own page", http.StatusForbidden)
			return
		}
		id := r.PathValue("id")
		if !jobspec.ValidID(id) {
			http.Error(w, "not a job ID", http.StatusBadRequest)
			return
		}
		j, _, err := s.Jobs.Get(r.Context(), id)
		switch {
		case errs.IsNotFound(err):
			http.Error(w, "no job "+id, http.StatusNotFound)
			return
		case err != nil:
			http.Error(w, "could not read the job: "+err.Error(), http.StatusBadGateway)
			return
		case !v.MayAct(j.Owner):
			http.Error(w, "refused: only the job's owner, admins and operators act on it, and only when signed in on a cluster with auth", http.StatusForbidden)
			return
		}
		c := s.reader(v.Name)
		reason := "from the dashboard by " + v.Name
		if a == actionCancel {
			err = c.Cancel(r.Context(), id, reason)
		} else {
			err = c.Drain(r.Context(), id, domain.DrainCheckpoint, domain.ThenRequeue, reason)
		}
		if err != nil {
			http.Error(w, "could not send the request: "+err.Error(), http.StatusBadGateway)
			return
		}
		s.Log.Info("web: job action", "job", id, "by", v.Name, "action", a)
		http.Redirect(w, r, "/jobs/"+id, http.StatusSeeOther)
	}
}
