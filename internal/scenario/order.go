package scenario

import (
	"fmt"
	"strings"
)

// Order is how the repetitions of a workload's targets follow one another.
type Order uint8

const (
	// Interleaved runs one repetition of each target in turn (A1 B1 A2 B2 …), every server
	// staying up between its turns, so drift on the machine (a noisy neighbour, thermal
	// throttling, a cache warming) falls on every target alike instead of on one. The default.
	Interleaved Order = iota
	// Sequential runs every repetition of one target before the next target starts, as
	// authzbench did before; each server is up only for its own repetitions.
	Sequential
)

var orderNames = [...]string{Interleaved: "interleaved", Sequential: "sequential"}

func (o Order) String() string {
	if int(o) < len(orderNames) {
		return orderNames[o]
	}
	return fmt.Sprintf("Order(%d)", uint8(o))
}

// ParseOrder reads "interleaved" or "sequential".
func ParseOrder(s string) (Order, error) {
	for o, name := range orderNames {
		if s == name {
			return Order(o), nil
		}
	}
	return 0, fmt.Errorf("order %q: want %s", s, strings.Join(orderNames[:], " or "))
}

// MarshalText writes the order's name, so a result file reads "interleaved".
func (o Order) MarshalText() ([]byte, error) { return []byte(o.String()), nil }

// UnmarshalText reads an order's name.
func (o *Order) UnmarshalText(b []byte) error {
	v, err := ParseOrder(string(b))
	if err != nil {
		return err
	}
	*o = v
	return nil
}
