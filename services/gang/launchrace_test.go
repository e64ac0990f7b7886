package gang_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/services/gang"
	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

// The ranks of a gang can start, and pass the launch barrier on one gang
// replica, before the replica that reserved them has recorded the
// reservation on the job. The job must still end up "running" once the
// reservation is recorded, not stay "reserved" with its gang running.
func TestGangStartedBeforeItsReservationWasRecorded(t *testing.T) {
	env, js := startGangEnv(t, 1, gang.Config{Workers: 2})
	ctx := context.Background()

	const id = "early"
	// The reservation is committed in etcd, but the job record still says
	// pending: the reserving replica has not got to it yet.
	a, _ := reservedGang(t, env, js, id, 1, 29600, domain.StatePending)
	p := a.Placement
	now := a.ReservedAt

	publishAll(t, env, id, p, domain.ReportStarted)
	testenv.Eventually(t, 30*time.Second, func() error {
		got, _, found, err := store.GetAllocation(ctx, env.Etcd, id)
		if err != nil || !found || got.State != domain.AllocRunning {
			return errorf("allocation not past the barrier yet: %+v found=%v err=%v", got.State, found, err)
		}
		return nil
	})
	// Now the reserving replica records the reservation.
	if _, _, err := js.Update(ctx, id, func(j *domain.Job) (bool, error) { return j.Reserve(1, p, now), nil }); err != nil {
		t.Fatal(err)
	}
	waitState(t, js, id, domain.StateRunning)
}

func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }
