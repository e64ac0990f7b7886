package admission_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/services/admission"
	"github.com/lockstep-dev/lockstep/shared/contract/subjects"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

// Admission whose durable consumer is deleted under it (by an operator,
// or with its stream) stops with an error naming it, where it used to
// return nil: a process that exits 0 is not restarted, and submissions
// would pile up with nothing said.
func TestAdmissionFailsWhenItsConsumerIsDeleted(t *testing.T) {
	env := testenv.Start(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ran := make(chan error, 1)
	go func() { ran <- admission.Run(ctx, admission.Config{Base: env.Base(t)}) }()
	testenv.Eventually(t, 20*time.Second, func() error {
		_, err := env.Bus.JS.Consumer(ctx, subjects.StreamJobs, subjects.DurableAdmission)
		return err
	})
	if err := env.Bus.JS.DeleteConsumer(ctx, subjects.StreamJobs, subjects.DurableAdmission); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-ran:
		if err == nil || !strings.Contains(err.Error(), "submission consumer stopped") {
			t.Errorf("admission returned %v, want the submission consumer named as stopped", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("admission still running 30 s after its consumer was deleted")
	}
}
