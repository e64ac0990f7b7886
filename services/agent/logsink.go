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

	log *rankLog

	mu   sync.Mutex
	part []byte
}

// rankLog is a rank's log file, shared by its stdout and stderr sinks so
// that maxRankLog bounds the file, not each stream. A nil f is a file that
// could not be opened, or one that reached its bound.
type rankLog struct {
	mu      sync.Mutex
	f       *os.File
	written int64
	limit   int64 // maxRankLog
	users   int   // sinks not yet closed
}

func (l *rankLog) write(p []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return
	}
	if l.written+int64(len(p)) <= l.limit {
		n, _ := l.f.Write(p)
		l.written += int64(n)
		return
	}
	_, _ = l.f.WriteString("\n[lockstep: this log file stops here, at " + strconv.FormatInt(l.limit, 10) + " bytes; lockstep logs has the rest, while the logs stream keeps it]\n")
	_ = l.f.Close()
	l.f = nil
}

// release closes the file once its last sink is closed.
func (l *rankLog) release() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.users--; l.users > 0 || l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}

// maxRankLog bounds a rank's log file. The agent writes it (as root on a
// node), so the owner's disk quota does not apply, and a rank printing
// without end would fill the data directory for every job. Past it the
// file ends with a note; the lines still go to the logs stream.
const maxRankLog = 2 << 30

// maxLine bounds a published line; longer output is split.
const maxLine = 64 << 10

// newSinks are a rank's stdout and stderr sinks, which publish under the
// job's owner (whose permissions let them read their own jobs' output and
// nobody else's) and append to one log file at path.
func (e *executor) newSinks(as domain.Assignment, rank int, path string) (stdout, stderr *logSink) {
	// In the job's directory, which its owner can write: a link planted
	// there is not followed (openUserFile).
	f, err := openUserFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		e.log.Warn("rank log file not writable", "path", path, "err", err)
		f = nil
	}
	log := &rankLog{f: f, limit: maxRankLog, users: 2}
	sink := func(stream string) *logSink {
		return &logSink{e: e, subject: subjects.Logs(as.Owner, as.JobID, rank, stream), jobID: as.JobID,
			attempt: strconv.Itoa(as.Attempt), log: log}
	}
	return sink("stdout"), sink("stderr")
}

func (s *logSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.log.write(p)
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

// Close publishes a trailing partial line and releases the file (closed
// with its last sink).
func (s *logSink) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.part) > 0 {
		s.publish(append(s.part, '\n'))
		s.part = nil
	}
	return s.log.release()
}

func (s *logSink) publish(line []byte) {
	msg := nats.NewMsg(s.subject)
	msg.Data = append([]byte(nil), line...)
	msg.Header.Set(subjects.HeaderAttempt, s.attempt)
	if _, err := s.e.bus.JS.PublishMsgAsync(msg); err != nil {
		s.e.log.Debug("log line not published", "job", s.jobID, "err", err)
	}
}
