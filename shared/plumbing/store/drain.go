package store

import (
	"context"

	"github.com/cockroachdb/errors"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/lockstep-dev/lockstep/shared/contract/codec"
	"github.com/lockstep-dev/lockstep/shared/contract/domain"
)

// GetDrain reads a job's drain in progress; found is false when there is
// none. A record that does not decode, fails its checks
// (domain.DecodeDrainRecord) or names another job is an error, with found
// true.
func GetDrain(ctx context.Context, kv clientv3.KV, jobID string) (rec domain.DrainRecord, modRev int64, found bool, err error) {
	rec, modRev, found, err = getDecoded(ctx, kv, DrainKey(jobID), drainUnder)
	return rec, modRev, found, errors.Wrapf(err, "drain record %s", DrainKey(jobID))
}

// DeleteDrain deletes a job's drain record if it belongs to attempt or an
// earlier one (or does not decode: nothing can act on it). A record of a
// later attempt is a new drain, written since the caller read its own: a
// replica finishing an old drain late must not end that one, or nobody
// would complete it and the job would keep its GPUs. The delete is a
// compare-and-set on the record read; a record rewritten meanwhile is
// read again.
func DeleteDrain(ctx context.Context, cli *clientv3.Client, jobID string, attempt int) error {
	key := DrainKey(jobID)
	for {
		resp, err := cli.Get(ctx, key)
		if err != nil {
			return errors.Wrapf(err, "get %s", key)
		}
		if len(resp.Kvs) == 0 {
			return nil
		}
		kv := resp.Kvs[0]
		var rec domain.DrainRecord
		if codec.Decode(kv.Value, &rec) == nil && rec.Attempt > attempt {
			return nil
		}
		txn, err := cli.Txn(ctx).
			If(clientv3.Compare(clientv3.ModRevision(key), "=", kv.ModRevision)).
			Then(clientv3.OpDelete(key)).Commit()
		if err != nil {
			return errors.Wrapf(err, "delete %s", key)
		}
		if txn.Succeeded {
			return nil
		}
	}
}
