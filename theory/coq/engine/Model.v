(* An executable model of the workspace engine (workspace/_state.py,
   _register.py, _guard.py, _preflight.py, _layout.py, _actions.py,
   _reads.py), the specification the Python engine is tested against.

   The state is W_t of the paper (Methodology, "Workspace state"): the blocks
   with their stable IDs, types and statuses, the archive groups, the payload
   store as a map from key to bytes, and the calls still waiting for results.
   Registration grows V_t; the budget guard admits, offloads or rejects a tool
   result; archive / restore / delete move units between the prompt and the
   store; preflight chooses the ordinary or the management rendering.

   Simplifications (also in FORMAT.md):
   - no tokeniser: every position form carries its token cost, given by the
     operation that creates the form (the driver measures it); the dashboard's
     own cost is given with every operation, and the management dashboard's
     ([mdash], at most the worst-case bound [mgmt] the floor reserves);
   - payload bytes and call ids are opaque naturals (the driver interns them);
   - both values of the engine's cache_prefix and keep_pending options (the
     configuration's [cache_prefix], [keep_pending] and [nres]); the floor is
     kept within B by refusing an operation that would pass it (unreachable
     but for a delete of several results of the kept batch, FORMAT.md); no
     snapshots; explicit unit lists instead of block-spec
     strings;
   - [recover] finds a block's bytes by looking the store up (its own key, or
     an inlined entry of a group payload) rather than walking from the top
     handle down. *)

From Coq Require Import List Arith Bool Lia PeanoNat.
Import ListNotations.

(* ------------------------------------------------------------------ *)
(* Records *)

Inductive kind := KSystem | KUser | KAssistant | KCall | KResult.
Inductive status := Visible | Pinned | Archived | Offloaded | Deleted.
Inductive uid := UB (n : nat) | UG (n : nat).

(* A block.  b_id .. b_calls never change once registered (stable IDs);
   the rest is the block's mutable status. Costs are (tool form, user form). *)
Record block := mkBlock {
  b_id : nat;             (* B<n> *)
  b_kind : kind;
  b_data : nat;           (* its payload bytes *)
  b_cid : nat;            (* results: the call id answered *)
  b_calls : list nat;     (* tool-call blocks: the parallel call ids *)
  b_c : nat * nat;        (* visible message *)
  b_p : nat * nat;        (* offload placeholder *)
  b_t : nat;              (* tombstone *)
  b_rej : bool;           (* a rejected result: its content is the notice *)
  b_status : status;
  b_group : option nat;   (* the archive group that directly holds it *)
  b_level : nat;
  b_h : nat * nat;        (* its handle when archived on its own *)
  b_tok : nat             (* ~Tok when it left the prompt *)
}.

(* The conversation: a plain message, or a tool-call block followed by the
   results registered for it (the engine's positions, in order). *)
Inductive turn := TP (b : block) | TC (c : block) (rs : list block).

Record group := mkGroup {
  g_id : nat;
  g_members : list uid;
  g_level : nat;
  g_parent : option nat;
  g_h : nat * nat;
  g_stubs : list (nat * nat);  (* result leaf -> its member stub's cost *)
  g_leaves : list nat;
  g_tok : nat
}.

Inductive key := KB (n : nat) | KG (n : nat).
Inductive entry := EIn (u : uid) (d : nat) | ERef (u : uid) (k : key).
Inductive value := VRaw (d : nat) | VGrp (es : list entry).

(* [cache_prefix]: the engine's option of that name (its default is true):
   the management rendering keeps the conversation's leading positions that
   fit, and the guard offloads first what that rendering would not show.
   [keep_pending]: the engine's option of that name (its default is true):
   while calls wait for results the management rendering keeps their batch
   (the calling block, the results so far, a placeholder per pending call)
   whole, and the floor reserves its room plus [nres] tokens per pending call
   (_notice_reserve: what the shortest rejection notice may cost beyond a
   pending placeholder, 0 with the shipped tokenizers). *)
Record config := mkConfig {
  budget : nat; hard : nat; fixed : nat; mgmt : nat; dfloor : nat; cache_prefix : bool;
  keep_pending : bool; nres : nat }.

Record state := mkState {
  cfg : config;
  turns : list turn;
  pending : list (nat * nat);   (* unanswered call id, its placeholder's cost *)
  owner : nat;                  (* the tool-call block the pending ids belong to *)
  groups : list group;
  store : list (key * value);
  nblocks : nat;
  ngroups : nat;
  dash : nat;
  mdash : nat                   (* the management dashboard's cost (at most [mgmt]) *)
}.

(* ------------------------------------------------------------------ *)
(* Helpers *)

Definition key_eqb (a b : key) : bool :=
  match a, b with
  | KB x, KB y | KG x, KG y => x =? y
  | _, _ => false
  end.

Definition uid_eqb (a b : uid) : bool :=
  match a, b with
  | UB x, UB y | UG x, UG y => x =? y
  | _, _ => false
  end.

Fixpoint lookup (k : key) (st : list (key * value)) : option value :=
  match st with
  | [] => None
  | (k', v) :: r => if key_eqb k k' then Some v else lookup k r
  end.

Definition remove_key (k : key) (st : list (key * value)) :=
  filter (fun kv => negb (key_eqb k (fst kv))) st.

Definition put (k : key) (v : value) (st : list (key * value)) :=
  remove_key k st ++ [(k, v)].

Definition turn_blocks (t : turn) : list block :=
  match t with TP b => [b] | TC c rs => c :: rs end.

Definition blocks (s : state) : list block := flat_map turn_blocks (turns s).

Definition find_block (s : state) (n : nat) : option block :=
  find (fun b => b_id b =? n) (blocks s).

Definition find_group (s : state) (g : nat) : option group :=
  find (fun x => g_id x =? g) (groups s).

Definition in_prompt (st : status) : bool :=
  match st with Visible | Pinned => true | _ => false end.

Definition is_result (b : block) : bool :=
  match b_kind b with KResult => true | _ => false end.

Definition is_call (b : block) : bool :=
  match b_kind b with KCall => true | _ => false end.

Definition sum (l : list nat) : nat := fold_right plus 0 l.

Fixpoint list_min (d : nat) (l : list nat) : nat :=
  match l with [] => d | [x] => x | x :: r => Nat.min x (list_min d r) end.

Fixpoint assoc (n : nat) (l : list (nat * nat)) : nat :=
  match l with [] => 0 | (k, v) :: r => if k =? n then v else assoc n r end.

(* The top-level group above a group (follow parents; fuel = #groups). *)
Fixpoint climb (gs : list group) (fuel : nat) (g : group) : group :=
  match fuel with
  | 0 => g
  | S f =>
      match g_parent g with
      | None => g
      | Some p =>
          match find (fun x => g_id x =? p) gs with
          | Some g' => climb gs f g'
          | None => g
          end
      end
  end.

Definition top_group (s : state) (g : nat) : option group :=
  option_map (climb (groups s) (length (groups s))) (find_group s g).

Definition first_leaf (g : group) : nat := list_min 0 (g_leaves g).

(* ------------------------------------------------------------------ *)
(* Rendering: what each position shows (_layout._position_messages) *)

Inductive role := RSystem | RUser | RAssistant | RCalls (ids : list nat) | RTool (cid : nat).
Inductive form :=
  FContent | FNotice | FPlaceholder | FHandle (u : uid) | FStub (u : uid)
| FTombstone | FPending | FDashboard.
Inductive pos := PB (n : nat) | PPending (cid : nat) | PDash.

(* What a message shows of the workspace (FORMAT.md, [shows]): the payload
   token of the block it shows in full (its content, or a rejected result's
   notice); for a handle or an offload placeholder, the store key it names, the
   archive level and the payload stored there (the driver interns bytes, so a
   block payload's token stands for its size and checksum); for a member stub,
   its group's key. *)
Inductive shows := SNone | SData (d : nat) | SHandle (k : key) (lvl : nat) (v : value) | SStub (k : key).

Record msg := mkMsg { m_pos : pos; m_form : form; m_role : role; m_cost : nat; m_show : shows }.

Definition plain_role (k : kind) : role :=
  match k with KSystem => RSystem | KUser => RUser | _ => RAssistant end.

(* A tool result's text: a tool message while its call is in the prompt
   (tf), else ordinary context (never an orphan tool message). *)
Definition wrap (tf : bool) (b : block) (f : form) (c : nat * nat) (sh : shows) : msg :=
  if tf then mkMsg (PB (b_id b)) f (RTool (b_cid b)) (fst c) sh
  else mkMsg (PB (b_id b)) f RUser (snd c) sh.

(* The payload a handle names (the store's value at its key). *)
Definition payload_at (s : state) (k : key) : value :=
  match lookup k (store s) with Some v => v | None => VGrp [] end.

(* [tf]: the block's tool call is in the prompt (used for results only). *)
Definition pos_msgs (s : state) (tf0 : bool) (b : block) : list msg :=
  let res := is_result b in
  let tf := res && tf0 in
  let me := PB (b_id b) in
  let dat := SData (b_data b) in
  match b_status b with
  | Deleted => if tf then [mkMsg me FTombstone (RTool (b_cid b)) (b_t b) SNone] else []
  | Visible | Pinned =>
      if res then [wrap tf b (if b_rej b then FNotice else FContent) (b_c b) dat]
      else if is_call b then [mkMsg me FContent (RCalls (b_calls b)) (snd (b_c b)) dat]
      else [mkMsg me FContent (plain_role (b_kind b)) (snd (b_c b)) dat]
  | Archived | Offloaded =>
      match b_group b with
      | None =>
          let sh := SHandle (KB (b_id b)) (b_level b) (payload_at s (KB (b_id b))) in
          let '(f, c) := match b_status b with
                         | Offloaded => (FPlaceholder, b_p b)
                         | _ => (FHandle (UB (b_id b)), b_h b)
                         end in
          if res then [wrap tf b f c sh] else [mkMsg me f (plain_role (b_kind b)) (snd c) sh]
      | Some g0 =>
          match top_group s g0 with
          | None => (* unreachable: a block's group is live; kept protocol-valid *)
              if tf then [mkMsg me FTombstone (RTool (b_cid b)) (b_t b) SNone] else []
          | Some g =>
              let sh := SHandle (KG (g_id g)) (g_level g) (payload_at s (KG (g_id g))) in
              if first_leaf g =? b_id b then
                if tf then [mkMsg me (FHandle (UG (g_id g))) (RTool (b_cid b)) (fst (g_h g)) sh]
                else [mkMsg me (FHandle (UG (g_id g))) RUser (snd (g_h g)) sh]
              else if tf then
                [mkMsg me (FStub (UG (g_id g))) (RTool (b_cid b)) (assoc (b_id b) (g_stubs g))
                   (SStub (KG (g_id g)))]
              else []
          end
      end
  end.

Definition turn_msgs (s : state) (t : turn) : list msg :=
  match t with
  | TP b => pos_msgs s false b
  | TC c rs => pos_msgs s false c ++ flat_map (pos_msgs s (in_prompt (b_status c))) rs
  end.

Definition pending_msgs (s : state) : list msg :=
  map (fun p => mkMsg (PPending (fst p)) FPending (RTool (fst p)) (snd p) SNone) (pending s).

Definition costs (ms : list msg) : nat := sum (map m_cost ms).

(* The dashboard's figures: the same numbers preflight compares with B. *)
Definition is_system_turn (t : turn) : bool :=
  match t with TP b => match b_kind b with KSystem => true | _ => false end | _ => false end.

Definition overhead (s : state) : nat :=
  fixed (cfg s) + sum (map (fun t => if is_system_turn t then costs (turn_msgs s t) else 0) (turns s)).

Definition conversation (s : state) : nat :=
  sum (map (fun t => if is_system_turn t then 0 else costs (turn_msgs s t)) (turns s))
  + costs (pending_msgs s).

Definition total_with (s : state) (d : nat) : nat := overhead s + conversation s + d.
Definition total (s : state) : nat := total_with s (dash s).

Definition dash_msg (d : nat) : msg := mkMsg PDash FDashboard RUser d SNone.

Definition normal_render (s : state) : list msg :=
  flat_map (turn_msgs s) (turns s) ++ pending_msgs s ++ [dash_msg (dash s)].

Definition pinned_msgs (s : state) : list msg :=
  flat_map (fun b => match b_status b with Pinned => pos_msgs s false b | _ => [] end) (blocks s).

Definition pinned_cost (s : state) : nat := costs (pinned_msgs s).

(* keep_pending: the batch still waiting for results is kept
   (_pending_tail_start() is not None). *)
Definition tail_on (s : state) : bool :=
  keep_pending (cfg s) && match pending s with [] => false | _ => true end.

Definition last_turn_msgs (s : state) : list msg :=
  match turns s with [] => [] | t0 :: _ => turn_msgs s (last (turns s) t0) end.

(* The kept batch: the newest turn (the calling block whose calls wait, and
   the results, notices and tombstones registered for it), then a
   placeholder per pending call (_management's tail). *)
Definition tail_msgs (s : state) : list msg :=
  if tail_on s then last_turn_msgs s ++ pending_msgs s else [].

(* _pending_tail_need: the kept batch and [nres] per pending call. *)
Definition tail_need (s : state) : nat :=
  if tail_on s then costs (tail_msgs s) + length (pending s) * nres (cfg s) else 0.

(* The management floor: protocol, tools, priming, pinned blocks, worst-case
   management dashboard, and with keep_pending the kept batch's need
   (management_floor). *)
Definition floor (s : state) : nat := fixed (cfg s) + pinned_cost s + mgmt (cfg s) + tail_need s.

(* The management dashboard's cost: the one measured in this state, never
   above the worst-case bound the floor reserves (_preflight._management). *)
Definition mdash_cost (s : state) : nat := Nat.min (mdash s) (mgmt (cfg s)).

(* The positions in order, each block with the messages it renders to. *)
Definition turn_positions (s : state) (t : turn) : list (block * list msg) :=
  match t with
  | TP b => [(b, pos_msgs s false b)]
  | TC c rs => (c, pos_msgs s false c) :: map (fun r => (r, pos_msgs s (in_prompt (b_status c)) r)) rs
  end.

Definition positions (s : state) : list (block * list msg) := flat_map (turn_positions s) (turns s).

(* A pinned block (always a plain message; a pinned result, which no
   operation creates, would be treated as an ordinary position). *)
Definition pinned_plain (b : block) : bool :=
  match b_status b with Pinned => negb (is_result b) | _ => false end.

(* A position's cost in the prefix walk: a pinned one is in the floor
   already, 0 (the engine's _pos_tree). *)
Definition wcost (p : block * list msg) : nat := if pinned_plain (fst p) then 0 else costs (snd p).

Definition pin_part (p : block * list msg) : list msg := if pinned_plain (fst p) then snd p else [].

(* The longest leading run of positions whose costs add up to at most [room]. *)
Fixpoint fit (room : nat) (ps : list (block * list msg)) : nat :=
  match ps with
  | [] => 0
  | p :: r => if wcost p <=? room then S (fit (room - wcost p) r) else 0
  end.

Definition opens_tool (ms : list msg) : bool :=
  match ms with m :: _ => match m_role m with RTool _ => true | _ => false end | [] => false end.

(* Move the cut [k] back while what follows it opens with a tool message
   (answering a call above the cut: the engine's _cont). *)
Fixpoint back (fuel k : nat) (p : nat -> bool) : nat :=
  match fuel with
  | 0 => k
  | S f => if (0 <? k) && p k then back f (k - 1) p else k
  end.

(* How many leading positions the management rendering shows in [room]
   tokens (_preflight._prefix_cut): the run that fits, before the call still
   waiting for results, moved back to the start of a unit (the engine moves
   back first and then stops before the waiting call; the waiting call's
   position opens with its calls, so both orders give the same cut). *)
Definition prefix_cut (s : state) (room : nat) : nat :=
  let ps := positions s in
  let k0 := fit room ps in
  let k1 := match pending s with [] => k0 | _ => Nat.min k0 (owner s - 1) end in
  back k1 k1 (fun k => opens_tool (flat_map snd (skipn k ps) ++ pending_msgs s)).

(* The positions the management rendering shows: the first [k], then the
   pinned ones after them (_preflight._management_prefix). *)
Definition shown_prefix (s : state) (k : nat) : list msg :=
  flat_map snd (firstn k (positions s)) ++ flat_map pin_part (skipn k (positions s)).

Definition is_pinned (b : block) : bool := match b_status b with Pinned => true | _ => false end.

Definition ends_assistant (ms : list msg) : bool :=
  match rev ms with
  | m :: _ => match m_role m with RAssistant | RCalls _ => true | _ => false end
  | [] => true   (* a position that renders nothing *)
  end.

(* With the kept batch after it, and no pinned block after it, the prefix
   backs off over positions that render nothing or end with an assistant
   message (which would merge with the batch's turn); the engine checks for
   pinned blocks once, before backing off (_management_prefix). *)
Definition kp_back (s : state) (k : nat) : nat :=
  let ps := positions s in
  if tail_on s && negb (existsb (fun p => is_pinned (fst p)) (skipn k ps))
  then back k k (fun j => match nth_error ps (j - 1) with
                          | Some p => ends_assistant (snd p)
                          | None => false
                          end)
  else k.

Definition management_cut (s : state) : nat :=
  kp_back s (prefix_cut s (budget (cfg s)
               - (fixed (cfg s) + pinned_cost s + costs (tail_msgs s) + mdash_cost s))).

(* The management rendering: with cache_prefix the conversation's longest
   leading run of whole units that fits beside the floor, then the pinned
   blocks after it; without, the pinned blocks; then, with keep_pending
   while calls wait, their batch whole; then the management dashboard. *)
Definition management_render (s : state) : list msg :=
  (if cache_prefix (cfg s) then shown_prefix s (management_cut s) else pinned_msgs s)
  ++ tail_msgs s ++ [dash_msg (mdash_cost s)].

Inductive mode := Normal | Management.

Definition mode_of (s : state) : mode :=
  if total s <=? budget (cfg s) then Normal else Management.

(* C_t = preflight(render(V_t) + handles(A_t) + D_t, B) *)
Definition render (s : state) : list msg :=
  match mode_of s with Normal => normal_render s | Management => management_render s end.

Definition tokens (s : state) : nat := fixed (cfg s) + costs (render s).

(* ------------------------------------------------------------------ *)
(* Transitions *)

Inductive reason :=
  RPending | RFloor | RDuplicate | RNotPending | RUnknown | RDeleted | RInGroup
| RPinned | RHasPending | RNotArchived | REmpty.

Inductive guard := GNone | GAdmit | GRejectCap | GRejectHard | GRejectPending.

Record result := mkResult {
  r_ok : option reason;      (* None: done; Some r: refused, nothing changed *)
  r_guard : guard;
  r_offloaded : list nat;
  r_recovered : option nat
}.

Definition done_ := mkResult None GNone [] None.
Definition refuse (r : reason) := mkResult (Some r) GNone [] None.

Definition with_turns (s : state) (ts : list turn) : state :=
  mkState (cfg s) ts (pending s) (owner s) (groups s) (store s) (nblocks s) (ngroups s) (dash s) (mdash s).
Definition with_pending (s : state) (p : list (nat * nat)) (o : nat) : state :=
  mkState (cfg s) (turns s) p o (groups s) (store s) (nblocks s) (ngroups s) (dash s) (mdash s).
Definition with_groups (s : state) (gs : list group) : state :=
  mkState (cfg s) (turns s) (pending s) (owner s) gs (store s) (nblocks s) (ngroups s) (dash s) (mdash s).
Definition with_store (s : state) (st : list (key * value)) : state :=
  mkState (cfg s) (turns s) (pending s) (owner s) (groups s) st (nblocks s) (ngroups s) (dash s) (mdash s).
Definition with_counts (s : state) (nb ng : nat) : state :=
  mkState (cfg s) (turns s) (pending s) (owner s) (groups s) (store s) nb ng (dash s) (mdash s).
Definition with_dash (s : state) (d : nat) : state :=
  mkState (cfg s) (turns s) (pending s) (owner s) (groups s) (store s) (nblocks s) (ngroups s) d
    (mdash s).

Definition with_mdash (s : state) (m : nat) : state :=
  mkState (cfg s) (turns s) (pending s) (owner s) (groups s) (store s) (nblocks s) (ngroups s)
    (dash s) m.

(* A block the transitions below never touch: a pinned block, or the call
   whose results are still pending (the engine refuses both beforehand). *)
Definition protected (s : state) (b : block) : bool :=
  match b_status b with
  | Pinned => true
  | Visible => (b_id b =? owner s) && negb (match pending s with [] => true | _ => false end)
  | _ => false
  end.

(* Change the mutable status of the blocks [f] selects; the registered part
   (id, kind, bytes, call ids) is copied unchanged. *)
Definition set_block (st : status) (g : option nat) (lvl : nat) (h : nat * nat) (tok : nat)
    (b : block) : block :=
  mkBlock (b_id b) (b_kind b) (b_data b) (b_cid b) (b_calls b) (b_c b) (b_p b) (b_t b) (b_rej b)
    st g lvl h tok.

Definition map_turn (f : block -> block) (t : turn) : turn :=
  match t with TP b => TP (f b) | TC c rs => TC (f c) (map f rs) end.

Definition update (s : state) (f : block -> block) : state :=
  with_turns s (map (map_turn (fun b => if protected s b then b else f b)) (turns s)).

(* The cost of a block's position now, and whether its call is in the prompt. *)
Definition parent_in_prompt (s : state) (b : block) : bool :=
  existsb (fun t => match t with
                    | TC c rs => in_prompt (b_status c) && existsb (fun r => b_id r =? b_id b) rs
                    | TP _ => false end) (turns s).

Definition pos_cost (s : state) (b : block) : nat := costs (pos_msgs s (parent_in_prompt s b) b).

(* Registration (RegisterLayer) *)
Definition plain_block (n : nat) (k : kind) (pin : bool) (data c : nat) : block :=
  mkBlock n k data 0 [] (c, c) (0, 0) 0 false (if pin then Pinned else Visible) None 0 (0, 0) 0.

Fixpoint nodupb (l : list nat) : bool :=
  match l with [] => true | x :: r => negb (existsb (Nat.eqb x) r) && nodupb r end.

Definition reg_plain (s : state) (k : kind) (pin : bool) (data c d : nat) : state * result :=
  match pending s with
  | _ :: _ => (s, refuse RPending)
  | [] =>
      if pin && negb (floor s + c <=? budget (cfg s)) then (s, refuse RFloor)
      else
        let n := S (nblocks s) in
        (with_dash (with_counts (with_turns s (turns s ++ [TP (plain_block n k pin data c)]))
                      n (ngroups s)) d, done_)
  end.

Definition reg_call (s : state) (ids : list nat) (data c : nat) (pend : list nat) (d : nat)
    : state * result :=
  match pending s with
  | _ :: _ => (s, refuse RPending)
  | [] =>
      match ids with
      | [] => (s, refuse REmpty)
      | _ =>
        if negb (nodupb ids) then (s, refuse RDuplicate)
        else
          let n := S (nblocks s) in
          let b := mkBlock n KCall data 0 ids (c, c) (0, 0) 0 false Visible None 0 (0, 0) 0 in
          let p := combine ids (pend ++ repeat 0 (length ids)) in
          (* keep_pending: the floor, the call, a placeholder and the notice
             reserve per call must fit (_check_pending_room) *)
          if keep_pending (cfg s)
             && negb (floor s + c + sum (map snd p) + length p * nres (cfg s) <=? budget (cfg s))
          then (s, refuse RFloor)
          else
          (with_dash (with_counts (with_pending (with_turns s (turns s ++ [TC b []])) p n)
                        n (ngroups s)) d, done_)
      end
  end.

(* The budget guard (GuardLayer._guard), on the state with the new result
   appended and visible. Candidates: visible raw results, oldest first. *)
Definition offload_block (s : state) (x : nat) : state :=
  let s1 := update s (fun b => if b_id b =? x
                               then set_block Offloaded None 1 (b_h b) (pos_cost s b) b else b) in
  match find_block s x with
  | Some b => with_store s1 (put (KB x) (VRaw (b_data b)) (store s))
  | None => s1
  end.

Definition offload_all (s : state) (xs : list nat) : state := fold_left offload_block xs s.

Definition candidates (s : state) (n : nat) : list (block * bool) :=
  flat_map (fun t => match t with
                     | TP _ => []
                     | TC c rs => map (fun r => (r, in_prompt (b_status c)))
                                    (filter (fun r => match b_status r with
                                                      | Visible => negb (b_rej r) && negb (b_id r =? n)
                                                      | _ => false end) rs)
                     end) (turns s).

Definition pick (tf : bool) (c : nat * nat) : nat := if tf then fst c else snd c.

(* Take candidates until the gain (content minus placeholder) covers [excess]. *)
Fixpoint take_plan (cs : list (block * bool)) (P Q excess : nat) (acc : list nat)
    : list nat * list (block * bool) * bool :=
  match cs with
  | [] => (rev acc, [], excess + Q <=? P)
  | (x, tf) :: cs' =>
      let P' := P + pick tf (b_c x) in
      let Q' := Q + pick tf (b_p x) in
      if excess + Q' <=? P' then (rev (b_id x :: acc), cs', true)
      else take_plan cs' P' Q' excess (b_id x :: acc)
  end.

Definition dash_at (ds : list nat) (i : nat) : nat := nth i ds (last ds 0).

Fixpoint rounds (fuel : nat) (s : state) (cs : list (block * bool)) (excess : nat)
    (ds : list nat) (i : nat) (done : list nat) : guard * list nat :=
  match fuel with
  | 0 => (GRejectHard, done)
  | S f =>
      let '(plan, rest, enough) := take_plan cs 0 0 excess [] in
      if negb enough then (GRejectHard, done)
      else
        let s' := offload_all s plan in
        let t := total_with s' (dash_at ds (S i)) in
        if t <=? hard (cfg s) then (GAdmit, done ++ plan)
        else rounds f s' rest (t - hard (cfg s)) ds (S i) (done ++ plan)
  end.

(* The guard's order (GuardLayer._guard): oldest first; with cache_prefix,
   first the results after the cut the management rendering of [s1] would
   show (estimated with the worst-case dashboard, _prefix_cut_estimate, and
   before the new result [n]), oldest first, then those inside it. *)
Definition guard_cut (s1 : state) (n : nat) : nat :=
  Nat.min (prefix_cut s1 (budget (cfg s1) - floor s1)) (n - 1).

(* With keep_pending, while calls of the batch still wait, the batch's
   earlier results are not candidates (only positions before its call). *)
Definition guard_order (s1 : state) (n : nat) (cs0 : list (block * bool)) : list (block * bool) :=
  let cs := if tail_on s1 then filter (fun e => b_id (fst e) <? owner s1) cs0 else cs0 in
  if cache_prefix (cfg s1) then
    let k := guard_cut s1 n in
    filter (fun e => k <? b_id (fst e)) cs ++ filter (fun e => negb (k <? b_id (fst e))) cs
  else cs.

Definition decide (s1 : state) (r : block) (parent_cost : nat) (ds : list nat) : guard * list nat :=
  if budget (cfg s1) <? fst (b_c r) + fixed (cfg s1) + pinned_cost s1 + parent_cost + dfloor (cfg s1)
  then (GRejectCap, [])
  else
    let t0 := total_with s1 (dash_at ds 0) in
    if t0 <=? hard (cfg s1) then (GAdmit, [])
    else let cs := guard_order s1 (b_id r) (candidates s1 (b_id r)) in
         rounds (S (length cs)) s1 cs (t0 - hard (cfg s1)) ds 0 [].

Definition add_result (ts : list turn) (r : block) : list turn :=
  match rev ts with
  | TC c rs :: before => rev before ++ [TC c (rs ++ [r])]
  | _ => ts
  end.

Fixpoint remove_pending (cid : nat) (p : list (nat * nat)) : list (nat * nat) :=
  match p with
  | [] => []
  | (i, c) :: r => if i =? cid then r else (i, c) :: remove_pending cid r
  end.

Definition last_is_call (ts : list turn) : bool :=
  match rev ts with TC _ _ :: _ => true | _ => false end.

(* keep_pending (_guard): an admitted result whose batch still waits is
   rejected if the floor with it admitted ([fits] false) passes the budget. *)
Definition pend_guard (s1 : state) (fits : bool) (g : guard) : guard :=
  match g with
  | GAdmit => if tail_on s1 && negb fits then GRejectPending else GAdmit
  | x => x
  end.

(* The floor stays within the budget: an operation that would leave it above
   is refused (see reg_result and act for when this can happen). *)
Definition within_floor (s s' : state) (r : result) : state * result :=
  if floor s' <=? budget (cfg s) then (s', r) else (s, refuse RFloor).

Definition reg_result (s : state) (cid data : nat) (c p : nat * nat) (t notice : nat)
    (nc : nat * nat) (ds : list nat) : state * result :=
  if negb (existsb (fun q => fst q =? cid) (pending s) && last_is_call (turns s))
  then (s, refuse RNotPending)
  else
    let n := S (nblocks s) in
    let r := mkBlock n KResult data cid [] c p t false Visible None 0 (0, 0) 0 in
    let pend := remove_pending cid (pending s) in
    let s1 := with_counts (with_pending (with_turns s (add_result (turns s) r)) pend (owner s))
                n (ngroups s) in
    let parent_cost := match find_block s (owner s) with Some b => pos_cost s b | None => 0 end in
    let '(g0, off) := decide s1 r parent_cost ds in
    let s2 := offload_all s off in
    let fin (b : block) := with_counts (with_pending (with_turns s2 (add_result (turns s2) b))
                                          pend (owner s)) n (ngroups s) in
    (* keep_pending: an admitted result whose batch still waits must leave
       the floor within the budget, else it is rejected (_guard, "pending") *)
    let g := pend_guard s1 (floor (fin r) <=? budget (cfg s)) g0 in
    let rejected := match g with GAdmit => false | _ => true end in
    let r' := if rejected
              then mkBlock n KResult notice cid [] nc p t true Visible None 0 (0, 0) 0 else r in
    let s3 := fin r' in
    (* unreachable with the engine's notice reserve (its notice fits the
       room the call reserved); kept harmless: the floor stays within B *)
    within_floor s (with_dash s3 (last ds (dash s))) (mkResult None g off None).

(* Unit selection (ActionsLayer._resolve / _check_block, explicit units). *)
Inductive action := AArchive | ARestore | ADelete.

(* A result of the batch still waiting for results, while it is kept. *)
Definition batch_ids (s : state) : list nat :=
  match rev (turns s) with TC _ rs :: _ => map b_id rs | _ => [] end.

Definition in_batch (s : state) (b : block) : bool :=
  tail_on s && existsb (Nat.eqb (b_id b)) (batch_ids s).

Definition check_unit (s : state) (a : action) (u : uid) : option reason :=
  match u with
  | UB n =>
      match find_block s n with
      | None => Some RUnknown
      | Some b =>
          match b_status b with
          | Deleted => Some RDeleted
          | Pinned => match a with ARestore => Some RNotArchived | _ => Some RPinned end
          | st =>
              match b_group b with
              | Some _ => Some RInGroup
              | None =>
                  if protected s b then
                    match a with ARestore => Some RNotArchived | _ => Some RHasPending end
                  else if in_batch s b then
                    (* keep_pending: the kept batch is archived whole, once its
                       last result arrives; a result of it is deleted only if
                       its tombstone fits beside the floor *)
                    match a with
                    | AArchive => Some RHasPending
                    | ADelete => if floor s + (b_t b - pos_cost s b) <=? budget (cfg s)
                                 then None else Some RFloor
                    | ARestore => Some RNotArchived
                    end
                  else match a, st with
                       | ARestore, Visible => Some RNotArchived
                       | _, _ => None
                       end
              end
          end
      end
  | UG g =>
      match find_group s g with
      | None => Some RUnknown
      | Some x => match g_parent x with Some _ => Some RInGroup | None => None end
      end
  end.

Fixpoint first_error (s : state) (a : action) (us : list uid) : option reason :=
  match us with
  | [] => None
  | u :: r => match check_unit s a u with Some e => Some e | None => first_error s a r end
  end.

Definition unit_key (s : state) (u : uid) : nat :=
  match u with
  | UB n => n
  | UG g => match find_group s g with Some x => first_leaf x | None => 0 end
  end.

(* Keep the first occurrence of each unit. *)
Fixpoint dedup_acc (seen : list uid) (l : list uid) : list uid :=
  match l with
  | [] => []
  | u :: r => if existsb (uid_eqb u) seen then dedup_acc seen r else u :: dedup_acc (u :: seen) r
  end.

Definition dedup (l : list uid) : list uid := dedup_acc [] l.

Fixpoint insert_by {A} (k : A -> nat) (x : A) (l : list A) : list A :=
  match l with
  | [] => [x]
  | y :: r => if k x <=? k y then x :: y :: r else y :: insert_by k x r
  end.

Definition sort_by {A} (k : A -> nat) (l : list A) : list A := fold_right (insert_by k) [] l.

Definition resolve (s : state) (a : action) (us : list uid) : list uid + reason :=
  match us with
  | [] => inr REmpty
  | _ => match first_error s a us with
         | Some e => inr e
         | None => inl (sort_by (unit_key s) (dedup us))
         end
  end.

Definition update_group (s : state) (g : nat) (f : group -> group) : state :=
  with_groups s (map (fun x => if g_id x =? g then f x else x) (groups s)).

Definition group_level_h (lvl : nat) (h : nat * nat) (x : group) : group :=
  mkGroup (g_id x) (g_members x) lvl (g_parent x) h (g_stubs x) (g_leaves x) (g_tok x).

Definition group_parent (p : option nat) (x : group) : group :=
  mkGroup (g_id x) (g_members x) (g_level x) p (g_h x) (g_stubs x) (g_leaves x) (g_tok x).

(* Several units into a new group G<k>: visible members inlined, archived
   members and groups referenced (ActionsLayer._archive). *)
Definition new_group (s : state) (us : list uid) (h : nat * nat) (stubs : list (nat * nat))
    : state :=
  let gid := S (ngroups s) in
  let info u := match u with
    | UB n => match find_block s n with
              | Some b => if in_prompt (b_status b)
                          then (EIn u (b_data b), 1, [n], pos_cost s b)
                          else (ERef u (KB n), S (b_level b), [n], b_tok b)
              | None => (ERef u (KB n), 1, [n], 0)
              end
    | UG g => match find_group s g with
              | Some x => (ERef u (KG g), S (g_level x), g_leaves x, g_tok x)
              | None => (ERef u (KG g), 1, [], 0)
              end
    end in
  let infos := map info us in
  let es := map (fun i => fst (fst (fst i))) infos in
  let lvl := fold_left Nat.max (map (fun i => snd (fst (fst i))) infos) 1 in
  let leaves := flat_map (fun i => snd (fst i)) infos in
  let tok := sum (map snd infos) in
  let direct n := existsb (uid_eqb (UB n)) us in
  let s1 := update s (fun b =>
              if direct (b_id b) then
                if in_prompt (b_status b)
                then set_block Archived (Some gid) (b_level b) (b_h b) (pos_cost s b) b
                else set_block (b_status b) (Some gid) (b_level b) (b_h b) (b_tok b) b
              else b) in
  let gs := map (fun x => if existsb (uid_eqb (UG (g_id x))) us
                          then group_parent (Some gid) x else x) (groups s1) in
  let g := mkGroup gid us lvl None h stubs leaves tok in
  let s2 := with_groups s1 (gs ++ [g]) in
  with_counts (with_store s2 (put (KG gid) (VGrp es) (store s))) (nblocks s) gid.

(* Archive: one visible block alone, one archived unit one level up, or
   several units into a new group G<k> (ActionsLayer._archive). *)
Definition archive_units (s : state) (us : list uid) (h : nat * nat) (stubs : list (nat * nat))
    : state :=
  match us with
  | [UB n] =>
      match find_block s n with
      | Some b =>
          if in_prompt (b_status b) then
            let s1 := update s (fun x => if b_id x =? n
                        then set_block Archived None 1 h (pos_cost s x) x else x) in
            with_store s1 (put (KB n) (VRaw (b_data b)) (store s))
          else update s (fun x => if b_id x =? n
                        then set_block Archived None (S (b_level x)) h (b_tok x) x else x)
      | None => s
      end
  | [UG g] =>
      match find_group s g with
      | Some x => update_group s g (group_level_h (S (g_level x)) h)
      | None => s
      end
  | _ => new_group s us h stubs
  end.

(* Restore: open units one level (ActionsLayer._restore). *)
Definition inlined (es : list entry) (n : nat) : bool :=
  existsb (fun e => match e with EIn (UB m) _ => m =? n | _ => false end) es.

Definition restore_unit (s : state) (u : uid) : state :=
  match u with
  | UB n =>
      let s1 := update s (fun b => if b_id b =? n
                  then set_block Visible None 0 (0, 0) (b_tok b) b else b) in
      with_store s1 (remove_key (KB n) (store s))
  | UG g =>
      let es := match lookup (KG g) (store s) with Some (VGrp es) => es | _ => [] end in
      let s1 := update s (fun b =>
                  match b_group b with
                  | Some g' => if g' =? g then
                                 if inlined es (b_id b)
                                 then set_block Visible None (b_level b) (b_h b) (b_tok b) b
                                 else set_block (b_status b) None (b_level b) (b_h b) (b_tok b) b
                               else b
                  | None => b
                  end) in
      let gs := map (fun x => match g_parent x with
                              | Some p => if p =? g then group_parent None x else x
                              | None => x end)
                    (filter (fun x => negb (g_id x =? g)) (groups s1)) in
      with_store (with_groups s1 gs) (remove_key (KG g) (store s))
  end.

(* Delete: tombstones keep IDs; payloads go (ActionsLayer._delete_units). *)
Definition under (s : state) (g : nat) (x : group) : bool :=
  g_id (climb (groups s) (length (groups s)) x) =? g.

Definition delete_unit (s : state) (u : uid) : state :=
  match u with
  | UB n =>
      let s1 := update s (fun b => if b_id b =? n
                  then set_block Deleted None 0 (0, 0) 0 b else b) in
      with_store s1 (remove_key (KB n) (store s))
  | UG g =>
      (* g and the groups inside it; their blocks are g's leaves *)
      let doomed h := existsb (fun x => (g_id x =? h) && under s g x) (groups s) in
      let dead (b : block) := match b_group b with Some h => doomed h | None => false end in
      let s1 := update s (fun b => if dead b then set_block Deleted None 0 (0, 0) 0 b else b) in
      let st := filter (fun kv => match fst kv with
                                  | KB n => match find_block s n with
                                            | Some b => negb (dead b)
                                            | None => true
                                            end
                                  | KG h => negb (doomed h)
                                  end) (store s) in
      with_store (with_groups s1 (filter (fun x => negb (under s g x)) (groups s))) st
  end.

Definition act (s : state) (a : action) (us : list uid) (h : nat * nat)
    (stubs : list (nat * nat)) (d : nat) : state * result :=
  match resolve s a us with
  | inr e => (s, refuse e)
  | inl us' =>
      let s' := match a with
                | AArchive => archive_units s us' h stubs
                | ARestore => fold_left restore_unit us' s
                | ADelete => fold_left delete_unit us' s
                end in
      (* the floor stays within B: unreachable for archive and restore (they
         leave the pinned blocks and the kept batch as they are); for a
         delete, several results of the kept batch whose tombstones fit one
         by one but not together (the engine checks each alone) *)
      within_floor s (with_dash s' d) done_
  end.

(* recover: the exact bytes of any live block (ReadLayer.recover). *)
Fixpoint inline_in (n : nat) (st : list (key * value)) : option nat :=
  match st with
  | [] => None
  | (_, VGrp es) :: r =>
      match find (fun e => match e with EIn (UB m) _ => m =? n | _ => false end) es with
      | Some (EIn _ d) => Some d
      | _ => inline_in n r
      end
  | _ :: r => inline_in n r
  end.

Definition recover (s : state) (n : nat) : option nat :=
  match find_block s n with
  | None => None
  | Some b =>
      match b_status b with
      | Deleted => None
      | Visible | Pinned => Some (b_data b)
      | _ => match lookup (KB n) (store s) with
             | Some (VRaw d) => Some d
             | _ => inline_in n (store s)
             end
      end
  end.

(* ------------------------------------------------------------------ *)
(* Operations and the step function *)

Inductive op :=
| OPlain (k : kind) (pin : bool) (data c d : nat)
| OCall (ids : list nat) (data c : nat) (pend : list nat) (d : nat)
| OResult (cid data : nat) (c p : nat * nat) (t notice : nat) (n : nat * nat) (ds : list nat)
| OArchive (us : list uid) (h : nat * nat) (stubs : list (nat * nat)) (d : nat)
| ORestore (us : list uid) (d : nat)
| ODelete (us : list uid) (d : nat)
| ORecover (n : nat)
| OMdash (m : nat).   (* the management dashboard now costs m (measured, like [dash]) *)

Definition step (s : state) (o : op) : state * result :=
  match o with
  | OPlain k pin data c d =>
      match k with
      | KCall | KResult => (s, refuse REmpty)
      | _ => reg_plain s k pin data c d
      end
  | OCall ids data c pend d => reg_call s ids data c pend d
  | OResult cid data c p t notice n ds => reg_result s cid data c p t notice n ds
  | OArchive us h stubs d => act s AArchive us h stubs d
  | ORestore us d => act s ARestore us (0, 0) [] d
  | ODelete us d => act s ADelete us (0, 0) [] d
  | ORecover n =>
      match find_block s n with
      | None => (s, refuse RUnknown)
      | Some b => match recover s n with
                  | Some x => (s, mkResult None GNone [] (Some x))
                  | None => (s, refuse RDeleted)
                  end
      end
  | OMdash m => (with_mdash s m, done_)
  end.

Definition init (c : config) (d : nat) : option state :=
  if fixed c + mgmt c <=? budget c then Some (mkState c [] [] 0 [] [] 0 0 d (mgmt c)) else None.

Fixpoint run (s : state) (os : list op) : state :=
  match os with [] => s | o :: r => run (fst (step s o)) r end.

(* The dashboard's ledger rows: live top-level units by first block. *)
Definition unit_rows (s : state) : list (uid * status * nat * nat) :=
  let bs := flat_map (fun b => match b_group b, b_status b with
                               | None, Deleted => []
                               | None, st => [(b_id b, (UB (b_id b), st, b_level b,
                                       if in_prompt st then pos_cost s b else b_tok b))]
                               | _, _ => [] end) (blocks s) in
  let gs := flat_map (fun x => match g_parent x with
                               | None => [(first_leaf x, (UG (g_id x), Archived, g_level x, g_tok x))]
                               | Some _ => [] end) (groups s) in
  map snd (sort_by fst (bs ++ gs)).

(* The dashboard's ledger with every column (_layout._set_urow,
   _preflight._ledger_row; the dashboard's "ID ~Tok Age Type Level Parent
   Status"): live top-level units, by first block.  A block's root turn is
   the number of its turn in [turns] (a system, user, assistant or tool-call
   registration opens one; a tool result belongs to its call's turn); the age
   is the number of root turns registered after it; a group's row is dated by
   its newest leaf. *)
Inductive utype := TSystem | TUser | TAssistant | TCall | TResult | TGroup.

Record lrow := mkRow {
  r_uid : uid; r_tok : nat; r_age : nat; r_type : utype;
  r_level : nat; r_parent : option nat; r_status : status }.

Definition type_of (k : kind) : utype :=
  match k with
  | KSystem => TSystem | KUser => TUser | KAssistant => TAssistant
  | KCall => TCall | KResult => TResult
  end.

(* Each block with its root turn and, for a result, its call block and
   whether that call is in the prompt. *)
Fixpoint rooted (i : nat) (ts : list turn) : list (block * nat * option nat * bool) :=
  match ts with
  | [] => []
  | TP b :: r => (b, i, None, false) :: rooted (S i) r
  | TC c rs :: r => ((c, i, None, false) ::
                     map (fun x => (x, i, Some (b_id c), in_prompt (b_status c))) rs)
                    ++ rooted (S i) r
  end.

Definition now (s : state) : nat := length (turns s).

Definition turn_of_block (s : state) (n : nat) : nat :=
  match find (fun e => b_id (fst (fst (fst e))) =? n) (rooted 1 (turns s)) with
  | Some e => snd (fst (fst e))
  | None => 0
  end.

Definition group_row (s : state) (x : group) : lrow :=
  mkRow (UG (g_id x)) (g_tok x) (now s - turn_of_block s (list_max (g_leaves x))) TGroup
        (g_level x) None Archived.

Definition ledger (s : state) : list lrow :=
  flat_map (fun e =>
    let '(b, i, par, tf) := e in
    match b_group b, b_status b with
    | None, Deleted => []
    | None, st =>
        [mkRow (UB (b_id b)) (if in_prompt st then costs (pos_msgs s tf b) else b_tok b) (now s - i)
               (type_of (b_kind b)) (b_level b) par st]
    | Some _, _ =>
        flat_map (fun x => match g_parent x with
                           | None => if first_leaf x =? b_id b then [group_row s x] else []
                           | Some _ => [] end) (groups s)
    end) (rooted 1 (turns s)).
