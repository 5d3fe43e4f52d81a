package report

import (
	"fmt"
	"testing"

	"github.com/authzbench/authzbench/internal/result"
)

func TestDurationUnits(t *testing.T) {
	for _, tc := range []struct {
		us   float64
		want string
	}{
		{0, "0ns"},
		{0.001, "1ns"},
		{0.5, "500ns"},
		{0.9994, "999ns"},
		{1, "1.00µs"},
		{6.93, "6.93µs"},
		{9.994, "9.99µs"},
		{9.996, "10.0µs"},
		{12.3, "12.3µs"},
		{99.94, "99.9µs"},
		{99.96, "100µs"},
		{181, "181µs"},
		{999.4, "999µs"},
		{999.7, "1.00ms"},
		{1000, "1.00ms"},
		{1500, "1.50ms"},
		{13600, "13.6ms"},
		{999_400, "999ms"},
		{999_700, "1.00s"},
		{2.5e6, "2.50s"},
		{60e6, "60.0s"},
	} {
		t.Run(fmt.Sprint(tc.us), func(t *testing.T) {
			if got := Duration(tc.us); got != tc.want {
				t.Errorf("Duration(%v) = %q, want %q", tc.us, got, tc.want)
			}
		})
	}
}

// TestDurationRoundsUpIntoTheNextUnit: just below 1 µs, the value rounds to 1000 ns; like
// 999.7 µs → 1.00ms, it should read 1.00µs.
func TestDurationRoundsUpIntoTheNextUnit(t *testing.T) {
	for _, us := range []float64{0.9995, 0.9996, 0.9999} {
		if got := Duration(us); got != "1.00µs" {
			t.Errorf("Duration(%v) = %q, want \"1.00µs\"", us, got)
		}
	}
}

func TestSignedDuration(t *testing.T) {
	for _, tc := range []struct {
		us   float64
		want string
	}{{0, "+0ns"}, {69, "+69.0µs"}, {-12.3, "-12.3µs"}, {4570, "+4.57ms"}, {-1500, "-1.50ms"}} {
		t.Run(fmt.Sprint(tc.us), func(t *testing.T) {
			if got := signedDuration(tc.us); got != tc.want {
				t.Errorf("signedDuration(%v) = %q, want %q", tc.us, got, tc.want)
			}
		})
	}
}

func TestThousandsSeparators(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		want string
	}{
		{0, "0.0"},
		{0.04, "0.0"},
		{54.66, "54.7"},
		{99.94, "99.9"},
		{100, "100"},
		{999, "999"},
		{999.5, "1,000"},
		{1000, "1,000"},
		{5080.4, "5,080"},
		{12345.5, "12,346"},
		{187656, "187,656"},
		{999999.4, "999,999"},
		{1234567, "1,234,567"},
		{1e9, "1,000,000,000"},
	} {
		t.Run(fmt.Sprint(tc.v), func(t *testing.T) {
			if got := Thousands(tc.v); got != tc.want {
				t.Errorf("thousands(%v) = %q, want %q", tc.v, got, tc.want)
			}
		})
	}
}

func TestClassListOrder(t *testing.T) {
	for _, tc := range []struct {
		name    string
		classes map[string]uint64
		want    string
	}{
		{"none", nil, ""},
		{"one", map[string]uint64{"timeout": 1}, "timeout: 1"},
		{"largest first", map[string]uint64{"wrong_decision": 2, "http_400": 7}, "http_400: 7, wrong_decision: 2"},
		{"ties by name", map[string]uint64{"http_503": 3, "http_400": 3, "exit_1": 3, "transport": 9},
			"transport: 9, exit_1: 3, http_400: 3, http_503: 3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ClassList(tc.classes); got != tc.want {
				t.Errorf("ClassList(%v) = %q, want %q", tc.classes, got, tc.want)
			}
		})
	}
}

func TestLoadLabel(t *testing.T) {
	for _, tc := range []struct {
		load result.Load
		want string
	}{
		{result.Load{Model: result.ClosedLoop, Workers: 1}, "1 worker"},
		{result.Load{Model: result.ClosedLoop, Workers: 8}, "8 workers"},
		{result.Load{Model: result.OpenLoop, Rate: 2000, Connections: 64}, "2,000/s x64"},
		{result.Load{Model: result.OpenLoop, Rate: 50, Connections: 1}, "50.0/s x1"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			if got := LoadLabel(tc.load); got != tc.want {
				t.Errorf("loadLabel(%+v) = %q, want %q", tc.load, got, tc.want)
			}
		})
	}
}
