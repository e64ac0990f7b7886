//go:build !lockstep_client

package main

import (
	"context"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"github.com/cockroachdb/errors"

	ltreport "github.com/lockstep-dev/lockstep/loadtest/report"
	"github.com/lockstep-dev/lockstep/loadtest/sim"
)

// maxSeeds bounds --seeds: a typo such as 1-10000 would otherwise start
// a day of simulation.
const maxSeeds = 1000

// parseSeeds reads --seeds: seeds and ranges of seeds, comma-separated
// ("1-5", "1,4,9", "1-3,7"), each seed once, in the order given.
func parseSeeds(s string) ([]uint64, error) {
	var out []uint64
	seen := map[uint64]bool{}
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		lo, hi, isRange := strings.Cut(item, "-")
		first, err := strconv.ParseUint(strings.TrimSpace(lo), 10, 64)
		if err != nil {
			return nil, errors.Newf("%q: want a seed (a whole number) or a range such as 1-5", item)
		}
		last := first
		if isRange {
			if last, err = strconv.ParseUint(strings.TrimSpace(hi), 10, 64); err != nil {
				return nil, errors.Newf("%q: want a range such as 1-5", item)
			}
			if last < first {
				return nil, errors.Newf("%q: the range ends before it starts", item)
			}
		}
		if last-first >= maxSeeds || len(out)+int(last-first+1) > maxSeeds {
			return nil, errors.Newf("more than %d seeds", maxSeeds)
		}
		for seed := first; ; seed++ {
			if seen[seed] {
				return nil, errors.Newf("seed %d is given twice", seed)
			}
			seen[seed] = true
			out = append(out, seed)
			if seed == last {
				break
			}
		}
	}
	return out, nil
}

// seeds runs every seed of list, parallel at a time (0: one per CPU),
// writes each seed's report to its folder under dir and the means and
// ranges over them to dir.
func (r simRunner) seeds(ctx context.Context, env *cliEnv, dir string, list []uint64, parallel int) error {
	if parallel == 0 {
		parallel = runtime.GOMAXPROCS(0)
	}
	parallel = min(parallel, len(list))
	progress := newSeedsProgress(env, len(list)*len(r.policies))
	line := r.line(env, true)
	var mu sync.Mutex // line prints from several goroutines
	done := func(seed uint64, res sim.Result) {
		mu.Lock()
		defer mu.Unlock()
		line(seed, res)
	}

	reports := make([]sim.Report, len(list))
	errs := make([]error, len(list))
	next := make(chan int)
	var wg sync.WaitGroup
	for range parallel {
		wg.Go(func() {
			for i := range next {
				if ctx.Err() != nil {
					errs[i] = ctx.Err()
					continue
				}
				rep, err := r.run(ctx, list[i], progress.set, done)
				if err == nil {
					if parallel > 1 {
						forgetCPU(&rep)
					}
					err = writeSeed(dir, list[i], rep)
				}
				reports[i], errs[i] = rep, err
			}
		})
	}
	for i := range list {
		next <- i
	}
	close(next)
	wg.Wait()
	progress.done()
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	all := sim.SeedsReport{Run: ltreport.NewRun("simulate-seeds", r.started, list[0]), Seeds: list, Runs: reports}
	if err := all.Write(dir); err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "report: %s/summary.md (each seed's: %s/seed-N/)\n", dir, dir)
	return nil
}

// forgetCPU drops rep's CPU times: the process's CPU time counted every
// run going on at once, not this one's (the reports show "—").
func forgetCPU(rep *sim.Report) {
	rep.CPUSeconds = 0
	for k := range rep.Results {
		rep.Results[k].CPU = 0
	}
}

// writeSeed writes one seed's whole report to its folder under dir.
func writeSeed(dir string, seed uint64, rep sim.Report) error {
	sub, err := ltreport.Dir(sim.SeedDir(dir, seed), rep.Started)
	if err != nil {
		return errors.Wrapf(err, "seed %d", seed)
	}
	return errors.Wrapf(rep.Write(sub), "seed %d", seed)
}

// seedsProgress is one bar over every run of a --seeds simulation, as
// runs go on at once: the share of their jobs simulated so far.
type seedsProgress struct {
	bar *ltreport.Progress

	mu   sync.Mutex
	frac map[string]float64 // per run (seed and policy): its share done
	sum  float64
}

func newSeedsProgress(env *cliEnv, runs int) *seedsProgress {
	return &seedsProgress{bar: ltreport.NewProgress(env.stderr, "seeds", float64(runs)), frac: map[string]float64{}}
}

func (p *seedsProgress) set(seed uint64, pol sim.Policy, done, total int, _ bool) {
	f := 1.0
	if total > 0 {
		f = float64(done) / float64(total)
	}
	key := fmt.Sprintf("%d/%s", seed, pol)
	p.mu.Lock()
	p.sum += f - p.frac[key]
	p.frac[key] = f
	sum := p.sum
	p.mu.Unlock()
	p.bar.Set(sum)
}

func (p *seedsProgress) done() { p.bar.Done() }
