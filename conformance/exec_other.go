//go:build !unix

package conformance

import "os/exec"

// ownProcessGroup does nothing where there are no process groups.
func ownProcessGroup(cmd *exec.Cmd) {}

// killProcessGroup kills cmd's process (not what it started).
func killProcessGroup(cmd *exec.Cmd) {
	cmd.Process.Kill()
}
