package bench

import "strconv"

func itoa(i int) string { return strconv.Itoa(i) }

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }
