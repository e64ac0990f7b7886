package store_test

import (
	"context"
	"strings"
	"testing"

	"github.com/lockstep-dev/lockstep/shared/domain"
	"github.com/lockstep-dev/lockstep/shared/store"
	"github.com/lockstep-dev/lockstep/shared/testenv"
)

// A reservation of a job waits for every running key of the job (ranks of
// an earlier attempt alive on some node), and only the job's: another
// job whose ID the first one's is a prefix of does not hold it back.
func TestReservationWaitsForTheJobsRunningKeys(t *testing.T) {
	env := testenv.Start(t)
	ctx := context.Background()
	node, err := env.Etcd.Put(ctx, store.NodeKey("n1"), store.MustJSON(domain.Node{Name: "n1", GPUs: 2}))
	if err != nil {
		t.Fatal(err)
	}
	revs := map[string]int64{"n1": node.Header.Revision}
	a := domain.Allocation{JobID: "job", Attempt: 2, State: domain.AllocReserved, Placement: domain.Placement{
		MasterAddr: "n1", MasterPort: 29500, Nodes: []domain.NodePlacement{{Node: "n1", GPUs: []int{0}}}}}
	for _, k := range []string{store.RunningKey("job", "n2"), store.RunningKey("job-2", "n1")} {
		if _, err := env.Etcd.Put(ctx, k, store.MustJSON(store.Running{Attempt: 1})); err != nil {
			t.Fatal(err)
		}
	}
	ok, resp, err := store.Reserve(ctx, env.Etcd, a, nil, revs, 0)
	if err != nil || ok {
		t.Fatalf("reserved beside ranks of attempt 1 (ok %v, err %v)", ok, err)
	}
	var read []string
	for _, r := range resp.Responses {
		for _, kv := range r.GetResponseRange().Kvs {
			if strings.HasPrefix(string(kv.Key), store.RunningPrefix) {
				read = append(read, string(kv.Key))
			}
		}
	}
	if len(read) != 1 || read[0] != store.RunningKey("job", "n2") {
		t.Errorf("the failed reservation read running keys %v, want only the job's own", read)
	}
	if _, err := env.Etcd.Delete(ctx, store.RunningKey("job", "n2")); err != nil {
		t.Fatal(err)
	}
	if ok, _, err := store.Reserve(ctx, env.Etcd, a, nil, revs, 0); err != nil || !ok {
		t.Fatalf("not reserved once the job's ranks are gone (ok %v, err %v)", ok, err)
	}
}

func TestDecodeRunningNamesTheField(t *testing.T) {
	key := store.RunningKey("job", "n1")
	for value, want := range map[string]string{
		`{"jobId":"job","node":"n1","attempt":1}`:   "",
		`{"jobId":"other","node":"n1","attempt":1}`: key + ": jobId",
		`{"jobId":"job","node":"n2","attempt":1}`:   key + ": node",
		`{"jobId":"job","node":"n1","attempt":0}`:   key + ": attempt",
		`[`: key + ": undecodable",
	} {
		_, err := store.DecodeRunning(key, []byte(value))
		switch {
		case want == "" && err != nil:
			t.Errorf("%s: %v", value, err)
		case want != "" && (err == nil || !strings.HasPrefix(err.Error(), want) || !store.IsMalformed(err)):
			t.Errorf("%s: error %v, want a malformed error starting %q", value, err, want)
		}
	}
	if _, err := store.DecodeRunning(store.RunningPrefix+"job", []byte(`{}`)); err == nil {
		t.Error("a running key without a node decoded")
	}
}
