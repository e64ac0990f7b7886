package lifecycle

import "github.com/lockstep-dev/lockstep/shared/contract/domain"

// Action is one step of a reconciler pass. The service applies each with
// its own I/O; the types below are all there are.
type Action interface{ isAction() }

// Release releases the allocation of Attempt: its job is finished, gone,
// or on another attempt.
type Release struct {
	JobID   string
	Attempt int
}

// LaunchTimeout releases and requeues a gang that was not running by its
// launch deadline.
type LaunchTimeout struct{ Alloc domain.Allocation }

// FailPull fails the attempt of a container gang whose pull phase failed
// (its deadline passed) and releases the gang, Reason going on the record.
type FailPull struct {
	Alloc  domain.Allocation
	Reason string
}

// Requeue releases the gang's attempt and requeues the job, Reason going on
// the record and the event.
type Requeue struct {
	Alloc  domain.Allocation
	Reason string
}

// AnnounceRunning records as running a gang past its launch barrier whose
// job still says reserved (a crash between the two).
type AnnounceRunning struct{ Alloc domain.Allocation }

// ConfirmAllocation is an allocation whose job the watch does not hold on
// the allocation's attempt: finished, or the watch lags the bucket. Read
// the record, then apply JudgeAllocation with what was read.
type ConfirmAllocation struct{ Alloc domain.Allocation }

// RequeueUnlessHeld requeues an active job that holds no allocation of its
// attempt (Alloc names only the job, attempt and trace). The allocation may
// have been written since the listing: read it again first, and requeue
// only if the read finds none of that attempt.
type RequeueUnlessHeld struct {
	Alloc  domain.Allocation
	Reason string
}

// DropMalformed releases an allocation record that cannot be used, Why
// naming the key and the field.
type DropMalformed struct {
	JobID string
	Why   error
}

// SweepStrays releases the job's keys that no allocation accounts for, of
// every attempt up to UpTo (every attempt when < 0).
type SweepStrays struct {
	JobID string
	UpTo  int
}

// ConfirmStrays is a job with stray keys that the watch does not hold.
// Sweeping every attempt is final: read the record, then apply JudgeStrays
// with what was read.
type ConfirmStrays struct {
	JobID    string
	HasAlloc bool
}

func (Release) isAction()           {}
func (LaunchTimeout) isAction()     {}
func (FailPull) isAction()          {}
func (Requeue) isAction()           {}
func (AnnounceRunning) isAction()   {}
func (ConfirmAllocation) isAction() {}
func (RequeueUnlessHeld) isAction() {}
func (DropMalformed) isAction()     {}
func (SweepStrays) isAction()       {}
func (ConfirmStrays) isAction()     {}
