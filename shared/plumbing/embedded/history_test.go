package embedded

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"go.yaml.in/yaml/v3"
)

// etcd compacts its history by itself, so a key written over and over
// does not keep every revision until the database hits its quota and etcd
// refuses every write; and the quota is EtcdQuotaBytes, not etcd's 2 GiB.
func TestEtcdCompactsItsHistory(t *testing.T) {
	e, err := StartEtcd(EtcdConfig{Listen: "127.0.0.1:0", Dir: filepath.Join(t.TempDir(), "etcd"), NoFsync: true, History: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{e.Endpoint()}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	first, err := cli.Put(ctx, "k", "1")
	if err != nil {
		t.Fatal(err)
	}
	old := first.Header.Revision
	if _, err := cli.Get(ctx, "k", clientv3.WithRev(old)); err != nil {
		t.Fatalf("revision %d readable before any compaction: %v", old, err)
	}
	// The compactor notes the revision every tenth of the history and
	// compacts to the one noted a history ago: keep writing until the
	// first revision is gone.
	// Given up before ctx ends, so that a failure says why, not that a
	// write timed out.
	giveUp := time.Now().Add(20 * time.Second)
	for i := 0; ; i++ {
		if time.Now().After(giveUp) {
			t.Fatalf("revision %d still readable after %d writes over 20 s: etcd does not compact", old, i)
		}
		if _, err := cli.Put(ctx, "k", "again"); err != nil {
			t.Fatal(err)
		}
		_, err := cli.Get(ctx, "k", clientv3.WithRev(old))
		if errors.Is(err, rpctypes.ErrCompacted) {
			break
		}
		if err != nil {
			t.Fatalf("reading revision %d: %v", old, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	st, err := cli.Status(ctx, e.Endpoint())
	if err != nil {
		t.Fatal(err)
	}
	if st.DbSizeQuota != EtcdQuotaBytes {
		t.Errorf("database quota %d bytes, want %d", st.DbSizeQuota, int64(EtcdQuotaBytes))
	}
}

// The compose cluster's etcd members keep the same history and quota as
// the embedded etcd: without the flags etcd never compacts, and a
// long-lived compose cluster would stop taking writes at 2 GiB.
func TestComposeEtcdKeepsTheSameHistory(t *testing.T) {
	raw, err := os.ReadFile("../../../deploy/docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	var compose struct {
		Services map[string]struct {
			Command []string `yaml:"command"`
		} `yaml:"services"`
	}
	if err := yaml.Unmarshal(raw, &compose); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"--auto-compaction-mode=periodic",
		"--auto-compaction-retention=" + EtcdHistory.String(),
		"--quota-backend-bytes=" + strconv.Itoa(EtcdQuotaBytes),
	}
	members := 0
	for name, svc := range compose.Services {
		if !strings.HasPrefix(name, "etcd-") {
			continue
		}
		members++
		for _, flag := range want {
			if !slices.Contains(svc.Command, flag) {
				t.Errorf("%s: command lacks %s", name, flag)
			}
		}
	}
	if members != 3 {
		t.Errorf("%d etcd members in the compose file, want 3", members)
	}
}
