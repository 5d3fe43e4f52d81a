package target

import (
	"fmt"
	"os"
)

// workDir makes a directory for a workload's files under the options' temporary directory.
func workDir(o Options) (string, error) {
	dir, err := os.MkdirTemp(o.TempDir, "authzbench-workload-")
	if err != nil {
		return "", fmt.Errorf("create directory for workload files: %w", err)
	}
	return dir, nil
}
