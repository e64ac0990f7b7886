package gang

import (
	"reflect"
	"testing"

	"go.etcd.io/etcd/api/v3/mvccpb"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
)

func TestRefusalDecidesWhatFollows(t *testing.T) {
	kv := func(key string, v any) *mvccpb.KeyValue {
		s, ok := v.(string)
		if !ok {
			s = store.MustJSON(v)
		}
		return &mvccpb.KeyValue{Key: []byte(key), Value: []byte(s)}
	}
	p := domain.Placement{Nodes: []domain.NodePlacement{{Node: "n1"}, {Node: "n2"}}}
	claim := kv(store.ClaimKey("n1", 3), domain.Claim{JobID: "other", Attempt: 1})
	ranksN2 := kv(store.RunningKey("n2", "job"), store.Running{JobID: "job", Node: "n2", Attempt: 1})
	for _, tc := range []struct {
		name      string
		kvs       []*mvccpb.KeyValue
		conflicts []string
		ranks     []string
		step      step
	}{
		{"a GPU taken: propose again", []*mvccpb.KeyValue{claim}, []string{"n1/gpu3 held by other"}, nil, proposeAgain},
		{"nothing read: a node changed", nil, []string{"a node of n1,n2 re-registered or went down"}, nil, proposeAgain},
		{"ranks of attempt 1 alive: wait for them", []*mvccpb.KeyValue{ranksN2},
			[]string{"n2 still runs ranks of attempt 1"}, []string{store.RunningKey("n2", "job")}, waitForRanks},
		{"ranks alive and a GPU taken: wait, whatever the placement", []*mvccpb.KeyValue{claim, ranksN2},
			[]string{"n1/gpu3 held by other", "n2 still runs ranks of attempt 1"}, []string{store.RunningKey("n2", "job")}, waitForRanks},
		{"an unreadable running key still counts", []*mvccpb.KeyValue{kv(store.RunningKey("n1", "job"), "garbage")},
			[]string{"ranks still run (" + store.RunningKey("n1", "job") + ": undecodable: invalid character 'g' looking for beginning of value)"},
			[]string{store.RunningKey("n1", "job")}, waitForRanks},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := readRefusal(tc.kvs, p, "job")
			if !reflect.DeepEqual(r.conflicts, tc.conflicts) || !reflect.DeepEqual(r.ranks, tc.ranks) {
				t.Errorf("read conflicts %q ranks %q, want %q %q", r.conflicts, r.ranks, tc.conflicts, tc.ranks)
			}
			if got := next(r); got != tc.step {
				t.Errorf("next = %d, want %d", got, tc.step)
			}
		})
	}
}
