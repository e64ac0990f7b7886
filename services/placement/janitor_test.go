package placement

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lockstep-dev/lockstep/shared/contract/subjects"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

// The leader's janitor removes a durable consumer that someone who may
// read the job records left on their stream, where it would count against
// the server's cap on consumers per stream until nobody could watch them.
func TestJanitorRemovesASquattersDurable(t *testing.T) {
	env := testenv.Start(t)
	ctx := t.Context()
	if _, err := env.Bus.JS.CreateConsumer(ctx, subjects.StreamKVJobs, jetstream.ConsumerConfig{
		Durable: "squatter", FilterSubject: subjects.KVJobsAll,
	}); err != nil {
		t.Fatal(err)
	}
	stop := startJanitorEvery(ctx, env.Bus, testenv.FailureLog(t), time.Hour, 100*time.Millisecond)
	defer stop()
	testenv.Eventually(t, 10*time.Second, func() error {
		_, err := env.Bus.JS.Consumer(context.Background(), subjects.StreamKVJobs, "squatter")
		if err == nil {
			return fmt.Errorf("the durable is still on %s", subjects.StreamKVJobs)
		}
		if !errors.Is(err, jetstream.ErrConsumerNotFound) {
			return err
		}
		return nil
	})
}
