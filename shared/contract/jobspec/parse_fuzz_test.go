package jobspec

import (
	"regexp"
	"strings"
	"testing"

	"github.com/lockstep-dev/lockstep/shared/contract/errs"
	"github.com/lockstep-dev/lockstep/shared/contract/internal/fuzzseed"
)

// FuzzParse: no input panics; every refusal is an invalid spec (never an
// internal error, which admission would retry); an accepted spec
// re-encodes to one that parses to the same spec (defaults are applied
// once). The seed corpus is in testdata/fuzz/FuzzParse.
func FuzzParse(f *testing.F) {
	f.Fuzz(func(t *testing.T, raw []byte) {
		s, err := Parse(raw)
		if err != nil {
			if !errs.IsInvalid(err) || !errs.IsPermanent(err) {
				t.Fatalf("refusal is not an invalid spec: %v", err)
			}
			return
		}
		fuzzseed.RoundTrip(t, raw, s, Parse)
	})
}

// goodSpecs seed the corpus with accepted specs.
var goodSpecs = map[string]string{
	"minimal": `{"gang":{"nodes":2,"gpusPerNode":8},"command":["train.py"]}`,
	"full": `{"id":"a-1","name":"n","queue":"research","priority":7,
		"gang":{"nodes":1,"gpusPerNode":8,"tasksPerNode":2,"cpusPerTask":4,"gpuBind":"closest"},
		"command":["x","--lr","0.1"],"env":{"A":"b"},"timeLimit":"1h30m","workdir":"/home/ada",
		"restartPolicy":{"maxRestarts":0,"requeueOnTimeLimit":true},
		"topology":{"maxSwitches":1,"waitForSwitches":"10m","preferred":"spine","preferredWait":"1m"},
		"checkpoint":{"signal":"SIGUSR2","gracePeriod":"60s","dir":"/ckpt","ack":"rank0"},
		"dependencies":[{"type":"afterok","jobs":["a-0","b"]},{"type":"afternotok","jobs":["c"]}],"singleton":true}`,
}

// TestSeedCorpus keeps testdata/fuzz/FuzzParse in step with goodSpecs and
// badSpecs: LOCKSTEP_UPDATE_CORPUS=1 rewrites it; otherwise every seed
// must be there.
func TestSeedCorpus(t *testing.T) {
	seeds := map[string][]byte{}
	for name, s := range goodSpecs {
		seeds["good-"+name] = []byte(s)
	}
	unsafe := regexp.MustCompile(`[^a-z0-9-]+`)
	for _, b := range badSpecs() {
		if len(b.spec) > 64<<10 {
			continue // the size check needs no seed
		}
		seeds["bad-"+strings.Trim(unsafe.ReplaceAllString(strings.ToLower(b.name), "-"), "-")] = []byte(b.spec)
	}
	fuzzseed.Sync(t, "FuzzParse", seeds)
}
