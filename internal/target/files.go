package target

import (
	"fmt"
	"os"
)

// workDir makes a directory for a workload's files under the run's temporary directory (the
// system's when empty).
func workDir(tempDir string) (string, error) {
	dir, err := os.MkdirTemp(tempDir, "authzbench-workload-")
	if err != nil {
		return "", fmt.Errorf("create directory for workload files: %w", err)
	}
	return dir, nil
}
