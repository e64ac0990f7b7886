package jobs_test

import (
	"context"
	"testing"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/plumbing/jobs"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

// UpdateFrom starts from a remembered record: current, it saves the read;
// stale, the compare-and-set fails and fn runs again on the stored record;
// and "nothing to change" on a stale record is not believed.
func TestUpdateFromRemembered(t *testing.T) {
	env := testenv.Start(t)
	ctx := context.Background()
	js := env.Jobs(t)
	create(t, js, domain.Job{ID: "j", State: domain.StateReserved, Attempt: 1})
	j, rev, err := js.Get(ctx, "j")
	if err != nil {
		t.Fatal(err)
	}
	setReason := func(r string) jobs.Mutator {
		return func(j *domain.Job) (bool, error) {
			if j.Reason == r {
				return false, nil
			}
			j.Reason = r
			return true, nil
		}
	}

	// Current: written at the remembered revision.
	got, rev2, changed, err := js.UpdateFrom(ctx, j, rev, setReason("a"))
	if err != nil || !changed || got.Reason != "a" || rev2 <= rev {
		t.Fatalf("current: got %+v rev %d changed %v err %v", got, rev2, changed, err)
	}
	// Stale: someone else wrote meanwhile; the stored record wins.
	if _, _, err := js.Update(ctx, "j", func(j *domain.Job) (bool, error) { j.Attempt = 2; return true, nil }); err != nil {
		t.Fatal(err)
	}
	got, rev3, changed, err := js.UpdateFrom(ctx, got, rev2, setReason("b"))
	if err != nil || !changed || got.Reason != "b" || got.Attempt != 2 {
		t.Fatalf("stale: got %+v changed %v err %v (want reason b on attempt 2)", got, changed, err)
	}
	stored, storedRev, _ := js.Get(ctx, "j")
	if stored.Reason != "b" || stored.Attempt != 2 || storedRev != rev3 {
		t.Fatalf("stored %+v at %d, returned revision %d", stored, storedRev, rev3)
	}
	// Stale and "unchanged" on the stale copy: the stored record says
	// otherwise, so fn must see it.
	if _, _, err := js.Update(ctx, "j", func(j *domain.Job) (bool, error) { j.Reason = "c"; return true, nil }); err != nil {
		t.Fatal(err)
	}
	got, _, changed, err = js.UpdateFrom(ctx, got, rev3, setReason("b"))
	if err != nil || !changed || got.Reason != "b" {
		t.Fatalf("stale no-op: got %+v changed %v err %v (want reason b written again)", got, changed, err)
	}
	// No remembered record: read first.
	got, _, changed, err = js.UpdateFrom(ctx, domain.Job{ID: "j"}, 0, setReason("d"))
	if err != nil || !changed || got.Reason != "d" || got.Attempt != 2 {
		t.Fatalf("unknown: got %+v changed %v err %v", got, changed, err)
	}
}
