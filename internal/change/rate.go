package change

import (
	"fmt"
	"strconv"
	"strings"
)

// ParseRate reads a rate of changes as --change-rate and a scenario file's change_rate give it:
// "10/s" or "10", changes a second.
func ParseRate(s string) (float64, error) {
	n, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(s), "/s"), 64)
	if err == nil {
		err = CheckRate(n)
	}
	if err != nil {
		return 0, fmt.Errorf("%q: want changes a second, such as 10/s", s)
	}
	return n, nil
}
