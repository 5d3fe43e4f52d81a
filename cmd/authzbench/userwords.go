package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/authzbench/authzbench/internal/userwords"
)

// countAnnotation marks a flag that counts something (workers, replicas, rounds): given, it
// must be 1 or more. Its default may be 0, meaning "not given" (the target's own default, such
// as one HTTP/2 connection); only the user's 0 is refused.
const countAnnotation = "authzbench/count"

// markCounts marks the named flags of fl as counts.
func markCounts(fl *pflag.FlagSet, names ...string) {
	for _, n := range names {
		if err := fl.SetAnnotation(n, countAnnotation, []string{"1"}); err != nil {
			panic(err) // a flag renamed without its mark: a programming error, caught by any test
		}
	}
}

// checkCounts refuses every count flag the user gave that is not one or more, 0 in the same
// words as a negative ("--replicas 0: want 1 or more"), never taken as 1; all at once.
func checkCounts(cmd *cobra.Command) error { return checkFlagCounts(cmd.Flags()) }

// checkFlagCounts is checkCounts on a flag set.
func checkFlagCounts(fl *pflag.FlagSet) error {
	var errs []error
	fl.VisitAll(func(f *pflag.Flag) {
		if !f.Changed || f.Annotations[countAnnotation] == nil {
			return
		}
		var values []int64
		switch f.Value.Type() {
		case "int":
			v, _ := fl.GetInt(f.Name)
			values = append(values, int64(v))
		case "int64":
			v, _ := fl.GetInt64(f.Name)
			values = append(values, v)
		case "intSlice":
			vs, _ := fl.GetIntSlice(f.Name)
			for _, v := range vs {
				values = append(values, int64(v))
			}
		default:
			panic(fmt.Sprintf("--%s is marked a count but holds %s", f.Name, f.Value.Type()))
		}
		for _, v := range values {
			if err := userwords.AtLeastOne("--"+f.Name, v); err != nil {
				errs = append(errs, err)
				return
			}
		}
	})
	return usageErrorOrNil(errors.Join(errs...))
}

// flagValueError says what a flag wants when its value does not parse, in place of pflag's
// message, which quotes Go's parser ("strconv.ParseFloat: parsing "x": invalid syntax").
func flagValueError(_ *cobra.Command, err error) error {
	var ive *pflag.InvalidValueError
	if errors.As(err, &ive) {
		f := ive.GetFlag()
		return usageError(fmt.Errorf("--%s %s: want %s", f.Name, ive.GetValue(), userwords.Want(f.Value.Type(), "a value")))
	}
	return usageError(err)
}

func usageErrorOrNil(err error) error {
	if err == nil {
		return nil
	}
	return usageError(err)
}
