package health

import (
	"time"

	"github.com/cockroachdb/errors"
)

// ErrInvalidOption marks a Checker option with a bad value.
var ErrInvalidOption = errors.New("invalid health option")

// Option configures a Checker.
type Option func(*options) error

type options struct {
	program    Program
	kernelLog  KernelLog
	now        func() time.Time
	smiTimeout time.Duration
}

// DefaultSMITimeout bounds one nvidia-smi poll when the caller's context has
// no deadline: a wedged driver can hang nvidia-smi for minutes.
const DefaultSMITimeout = 30 * time.Second

func defaultOptions() options {
	return options{now: time.Now, smiTimeout: DefaultSMITimeout}
}

// WithProgram runs p (usually CommandProgram) on every poll.
func WithProgram(p Program) Option {
	return func(o *options) error {
		if p == nil {
			return errors.Mark(errors.New("health-check program is nil"), ErrInvalidOption)
		}
		o.program = p
		return nil
	}
}

// WithKernelLog reads Xid errors from log on every poll.
func WithKernelLog(log KernelLog) Option {
	return func(o *options) error {
		if log == nil {
			return errors.Mark(errors.New("kernel log source is nil"), ErrInvalidOption)
		}
		o.kernelLog = log
		return nil
	}
}

// WithClock sets where Report.At comes from (time.Now by default).
func WithClock(now func() time.Time) Option {
	return func(o *options) error {
		if now == nil {
			return errors.Mark(errors.New("clock is nil"), ErrInvalidOption)
		}
		o.now = now
		return nil
	}
}

// WithSMITimeout bounds each nvidia-smi run when the poll's context has no
// deadline (DefaultSMITimeout otherwise).
func WithSMITimeout(d time.Duration) Option {
	return func(o *options) error {
		if d <= 0 {
			return errors.Mark(errors.Newf("nvidia-smi timeout %s is not positive", d), ErrInvalidOption)
		}
		o.smiTimeout = d
		return nil
	}
}
