package prometheus_test

import (
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/prometheus/config"
	"github.com/prometheus/prometheus/discovery"
	"go.yaml.in/yaml/v3"
)

const composeFile = "../../docker-compose.yml"

// containerDir is where the compose file mounts deploy/prometheus.
const containerDir = "/etc/prometheus"

// TestConfigLoads is `promtool check config`: prometheus.yml loads and
// its rule_files, read where the compose file mounts them, are the rule
// files here.
func TestConfigLoads(t *testing.T) {
	cfg := loadConfig(t)
	var matched []string
	for _, glob := range cfg.RuleFiles {
		rel, ok := strings.CutPrefix(glob, containerDir+"/")
		if !ok {
			t.Errorf("rule_files entry %s is not under %s", glob, containerDir)
			continue
		}
		m, err := filepath.Glob(filepath.Join(prometheusDir, rel))
		if err != nil {
			t.Fatal(err)
		}
		matched = append(matched, m...)
	}
	want, _ := filepath.Glob(rulesGlob)
	slices.Sort(matched)
	if !slices.Equal(matched, want) {
		t.Errorf("rule_files load %v, want every rule file %v", matched, want)
	}
	svc := composeServices(t)["prometheus"]
	for _, v := range []string{"./prometheus/prometheus.yml:" + containerDir + "/prometheus.yml:ro", "./prometheus/rules:" + containerDir + "/rules:ro"} {
		if !slices.Contains(svc.Volumes, v) {
			t.Errorf("the compose prometheus service does not mount %s (has %v)", v, svc.Volumes)
		}
	}
}

// TestScrapesEveryProcess: every Lockstep process of the compose file is a
// target of its service's job (lockstep-<service>) at the port its health
// check uses, and every etcd member is a target of job etcd at the
// metrics port it listens on for the compose network.
func TestScrapesEveryProcess(t *testing.T) {
	targets := map[string][]string{}
	cfg := loadConfig(t)
	for _, sc := range cfg.ScrapeConfigs {
		for _, sd := range sc.ServiceDiscoveryConfigs {
			static, ok := sd.(discovery.StaticConfig)
			if !ok {
				continue
			}
			for _, g := range static {
				for _, ls := range g.Targets {
					targets[sc.JobName] = append(targets[sc.JobName], string(ls["__address__"]))
				}
			}
		}
	}
	lockstep, etcd := 0, 0
	for name, svc := range composeServices(t) {
		switch {
		case len(svc.Command) > 1 && svc.Command[0] == "lockstep":
			lockstep++
			job := "lockstep-" + svc.Command[1]
			check := svc.Healthcheck.Test
			if len(check) == 0 {
				t.Errorf("%s has no health check to take its metrics port from", name)
				continue
			}
			u, err := url.Parse(check[len(check)-1])
			if err != nil || u.Port() == "" {
				t.Errorf("%s: health check %v names no port", name, check)
				continue
			}
			if want := svc.Hostname + ":" + u.Port(); !slices.Contains(targets[job], want) {
				t.Errorf("%s: job %s does not scrape %s (has %v)", name, job, want, targets[job])
			}
		case strings.HasPrefix(name, "etcd-"):
			etcd++
			if !slices.Contains(svc.Command, "--listen-metrics-urls=http://0.0.0.0:2381") {
				t.Errorf("%s does not serve /metrics on the compose network (--listen-metrics-urls=http://0.0.0.0:2381)", name)
			}
			if want := svc.Hostname + ":2381"; !slices.Contains(targets["etcd"], want) {
				t.Errorf("%s: job etcd does not scrape %s (has %v)", name, want, targets["etcd"])
			}
		}
	}
	if lockstep < 5 || etcd == 0 {
		t.Fatalf("found %d Lockstep processes and %d etcd members in %s", lockstep, etcd, composeFile)
	}
}

func loadConfig(t *testing.T) *config.Config {
	t.Helper()
	cfg, err := config.LoadFile(filepath.Join(prometheusDir, "prometheus.yml"), false, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

type composeService struct {
	Hostname    string   `yaml:"hostname"`
	Command     []string `yaml:"command"`
	Volumes     []string `yaml:"volumes"`
	Healthcheck struct {
		Test []string `yaml:"test"`
	} `yaml:"healthcheck"`
}

// composeServices reads the compose file's services (merge keys resolved).
func composeServices(t *testing.T) map[string]composeService {
	t.Helper()
	b, err := os.ReadFile(composeFile)
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Services map[string]composeService `yaml:"services"`
	}
	if err := yaml.Unmarshal(b, &f); err != nil {
		t.Fatalf("%s: %v", composeFile, err)
	}
	return f.Services
}
