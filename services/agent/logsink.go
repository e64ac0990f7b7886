package agent

import (
	"bytes"
	"os"
	"strconv"
	"sync"

	"github.com/nats-io/nats.go"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/subjects"
)

// logSink receives one output stream of a rank. It appends to the rank's
// log file and publishes each complete line to the logs stream, so
// `lockstep logs` works from any machine.
type logSink struct {
	e       *executor
	subject string
	jobID   string
	attempt string

	mu      sync.Mutex
	f       *os.File
	written int64 // to f
	limit   int64 // of f (maxRankLog)
	part    []byte
}

// maxRankLog bounds a rank's log file. The agent writes it (as root on a
// node), so the owner's disk quota does not apply, and a rank printing
// without end would fill the data directory for every job. Past it the
// file ends with a note; the lines still go to the logs stream.
const maxRankLog = 2 << 30

// maxLine bounds a published line; longer output is split.
const maxLine = 64 << 10

// newSink publishes under the job's owner, whose permissions let them
// read their own jobs' output and nobody else's.
func (e *executor) newSink(as domain.Assignment, rank int, stream, path string) *logSink {
	// In the job's directory, which its owner can write: a link planted
	// there is not followed (openUserFile).
	f, err := openUserFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		e.log.Warn("rank log file not writable", "path", path, "err", err)
		f = nil
	}
	return &logSink{e: e, subject: subjects.Logs(as.Owner, as.JobID, rank, stream), jobID: as.JobID,
		attempt: strconv.Itoa(as.Attempt), f: f, limit: maxRankLog}
}

func (s *logSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f != nil {
		if s.written+int64(len(p)) <= s.limit {
			n, _ := s.f.Write(p)
			s.written += int64(n)
		} else {
			_, _ = s.f.WriteString("\n[lockstep: this log file stops here, at " + strconv.FormatInt(s.limit, 10) + " bytes; lockstep logs has the rest, while the logs stream keeps it]\n")
			_ = s.f.Close()
			s.f = nil
		}
	}
	s.part = append(s.part, p...)
	for {
		i := bytes.IndexByte(s.part, '\n')
		if i < 0 {
			if len(s.part) >= maxLine {
				s.publish(s.part[:maxLine])
				s.part = s.part[maxLine:]
				continue
			}
			break
		}
		s.publish(s.part[:i+1])
		s.part = s.part[i+1:]
	}
	return len(p), nil
}

// Close publishes a trailing partial line and closes the file.
func (s *logSink) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.part) > 0 {
		s.publish(append(s.part, '\n'))
		s.part = nil
	}
	if s.f != nil {
		err := s.f.Close()
		s.f = nil
		return err
	}
	return nil
}

func (s *logSink) publish(line []byte) {
	msg := nats.NewMsg(s.subject)
	msg.Data = append([]byte(nil), line...)
	msg.Header.Set(subjects.HeaderAttempt, s.attempt)
	if _, err := s.e.bus.JS.PublishMsgAsync(msg); err != nil {
		s.e.log.Debug("log line not published", "job", s.jobID, "err", err)
	}
}
