package embedded

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A process killed with SIGKILL leaves etcd's HTTP socket behind: the next
// start in the same data folder must replace it, and a clean stop removes
// it, so none piles up anywhere.
func TestEtcdHTTPSocketLivesInTheDataFolder(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "etcd")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, httpSocketName)
	stale, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	stale.(*net.UnixListener).SetUnlinkOnClose(false)
	stale.Close() // what a SIGKILL leaves: the file, nobody listening

	e, err := StartEtcd(EtcdConfig{Listen: "127.0.0.1:0", Dir: dir, NoFsync: true})
	if err != nil {
		t.Fatalf("start over a stale socket: %v", err)
	}
	closed := false
	defer func() {
		if !closed {
			e.Close()
		}
	}()
	if ep := e.Endpoint(); !strings.HasPrefix(ep, "http://127.0.0.1:") {
		t.Errorf("endpoint %q is not the TCP listener", ep)
	}
	hc := http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", sock)
	}}}
	resp, err := hc.Get("http://etcd/health")
	if err != nil {
		t.Fatalf("etcd's /health on %s: %v", sock, err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"health":"true"`) {
		t.Errorf("/health: %d %s", resp.StatusCode, body)
	}

	e.Close()
	closed = true
	if _, err := os.Stat(sock); !os.IsNotExist(err) {
		t.Errorf("socket still there after Close: %v", err)
	}
}

// A data folder whose path is too long for a socket gets one in the
// temporary folder, named by the data folder so a later start there finds
// it again.
func TestEtcdHTTPSocketOfALongDataFolder(t *testing.T) {
	long := "/" + strings.Repeat("d", maxSocketPath)
	u, err := httpSocketURL(long, "https")
	if err != nil {
		t.Fatal(err)
	}
	again, _ := httpSocketURL(long, "https")
	other, _ := httpSocketURL(long+"x", "https")
	short, _ := httpSocketURL("/var/lib/lockstep/etcd", "http")
	switch {
	case u.Scheme != "unixs" || short.Scheme != "unix":
		t.Errorf("schemes %q and %q, want unixs for TLS and unix without", u.Scheme, short.Scheme)
	case filepath.Dir(u.Path) != os.TempDir() || len(u.Path) > maxSocketPath:
		t.Errorf("long folder's socket %q: not a short path in %s", u.Path, os.TempDir())
	case again.Path != u.Path:
		t.Errorf("the same folder's socket moved: %q then %q", u.Path, again.Path)
	case other.Path == u.Path:
		t.Errorf("two folders share the socket %q", u.Path)
	case short.Path != "/var/lib/lockstep/etcd/"+httpSocketName:
		t.Errorf("short folder's socket %q is not in the folder", short.Path)
	}
}

func TestEtcdWithoutADataFolderIsRefused(t *testing.T) {
	e, err := StartEtcd(EtcdConfig{Listen: "127.0.0.1:0"})
	if err == nil {
		e.Close()
		t.Fatal("etcd started without a data folder")
	}
	if !strings.Contains(err.Error(), "data folder: none given") {
		t.Errorf("error %q does not say what is missing", err)
	}
}
