//! Strongly connected components (Tarjan), without recursion.
//!
//! Why iterative: the graphs are small today, but a deep chain of files must
//! not be able to overflow the test thread's stack.

/// The strongly connected components of a graph of `n` nodes whose edges are
/// `adjacency[from] = [to, ..]`. Every node is in exactly one component; each
/// component's nodes are sorted, and the components are sorted by their
/// first node.
pub fn strongly_connected(adjacency: &[Vec<usize>]) -> Vec<Vec<usize>> {
    const UNSEEN: usize = usize::MAX;
    let n = adjacency.len();
    let mut index = vec![UNSEEN; n];
    let mut low = vec![0; n];
    let mut on_stack = vec![false; n];
    let mut stack = Vec::new();
    let mut components = Vec::new();
    let mut next_index = 0;
    // The depth-first walk: (node, how many of its edges were followed).
    let mut walk: Vec<(usize, usize)> = Vec::new();
    for start in 0..n {
        if index[start] != UNSEEN {
            continue;
        }
        walk.push((start, 0));
        while let Some(&mut (node, ref mut followed)) = walk.last_mut() {
            if *followed == 0 && index[node] == UNSEEN {
                index[node] = next_index;
                low[node] = next_index;
                next_index += 1;
                stack.push(node);
                on_stack[node] = true;
            }
            if let Some(&to) = adjacency[node].get(*followed) {
                *followed += 1;
                if index[to] == UNSEEN {
                    walk.push((to, 0));
                } else if on_stack[to] {
                    low[node] = low[node].min(index[to]);
                }
                continue;
            }
            walk.pop();
            if let Some(&(parent, _)) = walk.last() {
                low[parent] = low[parent].min(low[node]);
            }
            if low[node] == index[node] {
                let mut component = Vec::new();
                while let Some(member) = stack.pop() {
                    on_stack[member] = false;
                    component.push(member);
                    if member == node {
                        break;
                    }
                }
                component.sort_unstable();
                components.push(component);
            }
        }
    }
    components.sort();
    components
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chain_has_no_component_larger_than_one() {
        assert_eq!(
            strongly_connected(&[vec![1], vec![2], vec![]]),
            [vec![0], vec![1], vec![2]]
        );
    }

    #[test]
    fn circles_are_found_with_their_members_only() {
        // 0 → 1 → 2 → 0 is a circle; 3 hangs off it; 4 ⇄ 5 is a pair.
        let graph = [vec![1], vec![2, 3], vec![0], vec![4], vec![5], vec![4]];
        assert_eq!(
            strongly_connected(&graph),
            [vec![0, 1, 2], vec![3], vec![4, 5]]
        );
    }

    #[test]
    fn two_circles_joined_by_one_edge_stay_two() {
        let graph = [vec![1], vec![0, 2], vec![3], vec![2]];
        assert_eq!(strongly_connected(&graph), [vec![0, 1], vec![2, 3]]);
    }

    #[test]
    fn a_long_chain_does_not_overflow() {
        let n = 200_000;
        let mut graph: Vec<Vec<usize>> = (0..n).map(|i| vec![i + 1]).collect();
        graph[n - 1] = vec![0];
        assert_eq!(strongly_connected(&graph).len(), 1);
    }

    #[test]
    fn self_loops_are_harmless() {
        assert_eq!(
            strongly_connected(&[vec![0, 1], vec![1]]),
            [vec![0], vec![1]]
        );
    }
}
