package main

import (
	"runtime/debug"
	"slices"
	"strings"
)

// versionString is what `lockstep version` prints: set, the version a
// release build stamped in (-X main.version), when it is not "dev";
// otherwise the module version Go recorded (go install ...@vX), else the
// VCS revision of the checkout it was built in (go build records it),
// with "-dirty" when it had changes; and the Go version, and whether it is
// the client build.
func versionString(set string, info *debug.BuildInfo) string {
	v := set
	goVersion := ""
	if info != nil {
		goVersion = info.GoVersion
		if v == "dev" || v == "" {
			v = buildVersion(info)
		}
	}
	if v == "" {
		v = "dev (no version recorded)"
	}
	var notes []string
	if goVersion != "" {
		notes = append(notes, goVersion)
	}
	if clientBuild(info) {
		notes = append(notes, "client build")
	}
	if len(notes) > 0 {
		v += " (" + strings.Join(notes, ", ") + ")"
	}
	return v
}

// clientBuild reports whether info records the lockstep_client build tag
// (client_build.go): the CLI without the servers.
func clientBuild(info *debug.BuildInfo) bool {
	if info == nil {
		return false
	}
	for _, s := range info.Settings {
		if s.Key == "-tags" && slices.Contains(strings.Split(s.Value, ","), "lockstep_client") {
			return true
		}
	}
	return false
}

// buildVersion is the version Go recorded in info: the module's, else
// the VCS revision's, else "".
func buildVersion(info *debug.BuildInfo) string {
	if m := info.Main.Version; m != "" && m != "(devel)" {
		return m
	}
	var rev, modified, at string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		case "vcs.time":
			at = s.Value
		}
	}
	if rev == "" {
		return ""
	}
	v := "dev-" + rev[:min(12, len(rev))]
	if modified == "true" {
		v += "-dirty"
	}
	if at != "" {
		v += " " + at
	}
	return v
}
