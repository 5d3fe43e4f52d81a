package workload

// RuleValues is what each of the N rules of a rule-count workload (rules-<kind>-<N>, and its
// -indexed style) allows, in rule order: rule i's exact path, source network (CIDR), peer
// identity or group at index i. It is the family's own definition, from which an engine's
// package writes its version of the workload without this package knowing the engine. Nil for
// a workload of another family.
func (s *Scale) RuleValues() []string {
	if s == nil {
		return nil
	}
	for i := range ruleKinds {
		if k := &ruleKinds[i]; s.Family == "rules-"+k.name {
			out := make([]string, s.N)
			for j := range out {
				out[j] = k.key(j)
			}
			return out
		}
	}
	return nil
}
