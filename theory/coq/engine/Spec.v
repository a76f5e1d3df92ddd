(* The specification of what the agent sees, written directly over the
   workspace state (its turns and blocks, archive groups and payload store):
   definitions only, no proofs.  Statements.v states that the model's
   rendering, guard, deletion, handles and ledger (Model.v) are these.

   Nothing here calls a function of Model.v: only its record types, their
   fields and constructors.  So a change to one of the model's functions (its
   renderer, store look-up, ledger, guard) leaves these definitions as they
   are, and a statement comparing the two becomes false on some concrete run
   (the mutation suite computes such runs with vm_compute).

   Paper: Methodology, "Context Stream" ((i) visible blocks appear in the
   active prompt with exact content; (ii) archived blocks are replaced by
   compact handles ... while their original bytes are stored externally),
   "Workspace invariants", eq. (archive-contract), Algorithm 1, and
   Implementation Details ("Dashboard format": ID, ~Tok, Age, Type, Level,
   Parent, Status). *)

From Coq Require Import List Arith Bool PeanoNat ZArith.
Import ListNotations.
From VistaLabEngine Require Import Model.

(* ------------------------------------------------------------------ *)
(* Elementary helpers (own copies: none of Model.v's) *)

Definition sp_sum (l : list nat) : nat := fold_left plus l 0.

Definition sp_key_eq (a b : key) : bool :=
  match a, b with
  | KB x, KB y => Nat.eqb x y
  | KG x, KG y => Nat.eqb x y
  | _, _ => false
  end.

(* The payload stored under key [k] (keys are unique in the store). *)
Fixpoint sp_lookup (k : key) (st : list (key * value)) : option value :=
  match st with
  | [] => None
  | kv :: r => if sp_key_eq k (fst kv) then Some (snd kv) else sp_lookup k r
  end.

Definition sp_blocks_of (t : turn) : list block :=
  match t with TP b => [b] | TC c rs => c :: rs end.

(* Every registered block, in registration (= position) order. *)
Definition sp_blocks (s : state) : list block := concat (map sp_blocks_of (turns s)).

Definition sp_block (s : state) (n : nat) : option block :=
  find (fun b => Nat.eqb (b_id b) n) (sp_blocks s).

Definition sp_group (s : state) (g : nat) : option group :=
  find (fun x => Nat.eqb (g_id x) g) (groups s).

Definition sp_shown_in_prompt (st : status) : bool :=
  match st with Visible => true | Pinned => true | _ => false end.

(* The top-level group holding group [x]: follow parents (at most one step
   per group). *)
Fixpoint sp_top (gs : list group) (fuel : nat) (x : group) : group :=
  match fuel, g_parent x with
  | S f, Some p =>
      match find (fun y => Nat.eqb (g_id y) p) gs with
      | Some y => sp_top gs f y
      | None => x
      end
  | _, _ => x
  end.

Definition sp_top_of (s : state) (g : nat) : option group :=
  match sp_group s g with
  | Some x => Some (sp_top (groups s) (length (groups s)) x)
  | None => None
  end.

Fixpoint sp_min (l : list nat) : nat :=
  match l with [] => 0 | [x] => x | x :: r => Nat.min x (sp_min r) end.

Fixpoint sp_max (l : list nat) : nat :=
  match l with [] => 0 | x :: r => Nat.max x (sp_max r) end.

(* A group's handle sits at its first (lowest-numbered) leaf. *)
Definition sp_first (x : group) : nat := sp_min (g_leaves x).

Fixpoint sp_stub_cost (n : nat) (l : list (nat * nat)) : nat :=
  match l with [] => 0 | (m, c) :: r => if Nat.eqb m n then c else sp_stub_cost n r end.

(* ------------------------------------------------------------------ *)
(* Fidelity: what each position must show *)

(* The role a block's message has: a tool result answers its call with a
   tool message while the call is in the prompt ([incall]), else it is
   ordinary user context; a tool-call block is an assistant message with its
   calls. *)
Definition sp_role (b : block) (incall : bool) : role :=
  match b_kind b with
  | KSystem => RSystem
  | KUser => RUser
  | KAssistant => RAssistant
  | KCall => RCalls (b_calls b)
  | KResult => if incall then RTool (b_cid b) else RUser
  end.

Definition sp_is_result (b : block) : bool :=
  match b_kind b with KResult => true | _ => false end.

(* A handle, placeholder or notice is text: a call block left behind by its
   calls is an assistant message without them. *)
Definition sp_text_role (b : block) (incall : bool) : role :=
  match b_kind b with
  | KSystem => RSystem
  | KUser => RUser
  | KAssistant | KCall => RAssistant
  | KResult => if incall then RTool (b_cid b) else RUser
  end.

(* A form's cost: the tool-message figure for a result answering its call in
   the prompt, the user-form figure otherwise. *)
Definition sp_cost (b : block) (incall : bool) (c : nat * nat) : nat :=
  if sp_is_result b && incall then fst c else snd c.

Definition sp_payload (s : state) (k : key) : value :=
  match sp_lookup k (store s) with Some v => v | None => VGrp [] end.

(* The messages of block [b]'s position (the "defined form" of each status):
   - visible or pinned: the block itself, showing its exact registered bytes
     ([b_data]; for a result the guard rejected, its notice);
   - archived or offloaded on its own: its handle (placeholder when offloaded)
     naming its payload key, level and stored payload;
   - inside an archive group: the top-level group's handle at the group's
     first leaf, a member stub at a result whose call is in the prompt (so the
     call stays answered), nothing elsewhere;
   - deleted: a tombstone at a result whose call is in the prompt, else
     nothing. *)
Definition sp_position (s : state) (incall : bool) (b : block) : list msg :=
  let p := PB (b_id b) in
  let tool := sp_is_result b && incall in
  match b_status b with
  | Visible | Pinned =>
      [mkMsg p (if sp_is_result b && b_rej b then FNotice else FContent) (sp_role b incall)
             (sp_cost b incall (b_c b)) (SData (b_data b))]
  | Deleted =>
      if tool then [mkMsg p FTombstone (RTool (b_cid b)) (b_t b) SNone] else []
  | Archived | Offloaded =>
      match b_group b with
      | None =>
          let sh := SHandle (KB (b_id b)) (b_level b) (sp_payload s (KB (b_id b))) in
          match b_status b with
          | Offloaded => [mkMsg p FPlaceholder (sp_text_role b incall) (sp_cost b incall (b_p b)) sh]
          | _ => [mkMsg p (FHandle (UB (b_id b))) (sp_text_role b incall)
                        (sp_cost b incall (b_h b)) sh]
          end
      | Some g0 =>
          match sp_top_of s g0 with
          | None => if tool then [mkMsg p FTombstone (RTool (b_cid b)) (b_t b) SNone] else []
          | Some g =>
              if Nat.eqb (sp_first g) (b_id b) then
                [mkMsg p (FHandle (UG (g_id g))) (if tool then RTool (b_cid b) else RUser)
                       (if tool then fst (g_h g) else snd (g_h g))
                       (SHandle (KG (g_id g)) (g_level g) (sp_payload s (KG (g_id g))))]
              else if tool then
                [mkMsg p (FStub (UG (g_id g))) (RTool (b_cid b))
                       (sp_stub_cost (b_id b) (g_stubs g)) (SStub (KG (g_id g)))]
              else []
          end
      end
  end.

(* A call's results see whether the call itself is in the prompt. *)
Definition sp_turn (s : state) (t : turn) : list msg :=
  match t with
  | TP b => sp_position s false b
  | TC c rs => sp_position s false c ++
               concat (map (sp_position s (sp_shown_in_prompt (b_status c))) rs)
  end.

Definition sp_pending (s : state) : list msg :=
  map (fun p => mkMsg (PPending (fst p)) FPending (RTool (fst p)) (snd p) SNone) (pending s).

Definition sp_dashboard (d : nat) : msg := mkMsg PDash FDashboard RUser d SNone.

Definition sp_costs (ms : list msg) : nat := sp_sum (map m_cost ms).

(* The candidate rendering of eq. (workspace-render): render(V_t) (+) handles(A_t)
   (+) D_t, after the protocol message: every position in order, the pending
   placeholders, the dashboard. *)
Definition sp_candidate (s : state) : list msg :=
  concat (map (sp_turn s) (turns s)) ++ sp_pending s ++ [sp_dashboard (dash s)].

(* |C~_t|: the fixed overhead (tool schemas, protocol, priming) plus the
   candidate's messages. *)
Definition sp_candidate_tokens (s : state) : nat := fixed (cfg s) + sp_costs (sp_candidate s).

Definition sp_pinned (s : state) : list msg :=
  concat (map (fun b => match b_status b with
                        | Pinned => sp_position s false b
                        | _ => [] end) (sp_blocks s)).

(* The management dashboard's cost: as measured, within the bound the floor
   reserves for it. *)
Definition sp_mdash (s : state) : nat := if Nat.leb (mdash s) (mgmt (cfg s)) then mdash s else mgmt (cfg s).

(* The positions in order, with their messages, for the prefix the
   management rendering keeps (cache_prefix). *)
Definition sp_positions (s : state) : list (block * list msg) :=
  concat (map (fun t => match t with
    | TP b => [(b, sp_position s false b)]
    | TC c rs => (c, sp_position s false c) ::
                 map (fun r => (r, sp_position s (sp_shown_in_prompt (b_status c)) r)) rs
    end) (turns s)).

(* A pinned block (a plain message: no operation pins a result). *)
Definition sp_plain_pin (b : block) : bool :=
  match b_status b with Pinned => negb (sp_is_result b) | _ => false end.

(* What a position adds to the prefix: a pinned one is paid for in the floor. *)
Definition sp_walk (p : block * list msg) : nat :=
  if sp_plain_pin (fst p) then 0 else sp_costs (snd p).

(* The number of leading positions whose costs add up to at most [room]. *)
Fixpoint sp_fits (room : nat) (ps : list (block * list msg)) : nat :=
  match ps with
  | [] => 0
  | p :: r => if Nat.leb (sp_walk p) room then S (sp_fits (room - sp_walk p) r) else 0
  end.

Definition sp_opens_tool (ms : list msg) : bool :=
  match ms with m :: _ => match m_role m with RTool _ => true | _ => false end | [] => false end.

(* A cut at [k] moved back while what follows it ([after k]) opens with a
   tool message, i.e. answers a call above the cut. *)
Fixpoint sp_unit_start (fuel k : nat) (after : nat -> bool) : nat :=
  match fuel with
  | 0 => k
  | S f => if Nat.ltb 0 k && after k then sp_unit_start f (k - 1) after else k
  end.

(* The management rendering's cut for [room] tokens: the leading run that
   fits, stopping before a call still waiting for results, at the start of a
   unit (never between a call and the tool messages answering it). *)
Definition sp_cut (s : state) (room : nat) : nat :=
  let ps := sp_positions s in
  let k0 := sp_fits room ps in
  let k1 := match pending s with
            | [] => k0
            | _ => if Nat.leb k0 (owner s - 1) then k0 else owner s - 1
            end in
  sp_unit_start k1 k1 (fun k => sp_opens_tool (concat (map snd (skipn k ps)) ++ sp_pending s)).

(* keep_pending: while calls wait, the batch kept whole -- the newest turn
   (the calling block and what was registered for it), then a placeholder
   per pending call. *)
Definition sp_keeps (s : state) : bool :=
  keep_pending (cfg s) && negb (Nat.eqb (length (pending s)) 0).

Definition sp_kept (s : state) : list msg :=
  if sp_keeps s then
    match rev (turns s) with t :: _ => sp_turn s t | [] => [] end ++ sp_pending s
  else [].

(* The last message of a position is an assistant's (or it shows nothing). *)
Definition sp_assistant_last (ms : list msg) : bool :=
  match rev ms with
  | [] => true
  | m :: _ => match m_role m with RAssistant => true | RCalls _ => true | _ => false end
  end.

(* With the batch kept after the prefix and no pinned block after the cut,
   the cut moves back over positions ending with an assistant message (or
   showing nothing): the prefix never ends in an assistant message right
   before the batch's calls. *)
Definition sp_kept_cut (s : state) (k : nat) : nat :=
  let ps := sp_positions s in
  if sp_keeps s && forallb (fun p => match b_status (fst p) with Pinned => false | _ => true end)
                           (skipn k ps)
  then sp_unit_start k k (fun j => match nth_error ps (j - 1) with
                                   | Some p => sp_assistant_last (snd p)
                                   | None => false end)
  else k.

(* The management rendering: with cache_prefix, the positions before the cut
   for the room the floor leaves (B minus fixed, pinned, the kept batch and
   the management dashboard), then the pinned blocks after it; without,
   every pinned block; then the kept batch (keep_pending); then the
   management dashboard. *)
Definition sp_management (s : state) : list msg :=
  (if cache_prefix (cfg s) then
     let k := sp_kept_cut s (sp_cut s (budget (cfg s) - (fixed (cfg s) + sp_costs (sp_pinned s)
                                                          + sp_costs (sp_kept s) + sp_mdash s))) in
     concat (map snd (firstn k (sp_positions s))) ++
     concat (map (fun p => if sp_plain_pin (fst p) then snd p else []) (skipn k (sp_positions s)))
   else sp_pinned s) ++ sp_kept s ++ [sp_dashboard (sp_mdash s)].

(* C_t = preflight(C~_t, B): the candidate if it fits B, else the management
   rendering. *)
Definition sp_render (s : state) : list msg :=
  if sp_candidate_tokens s <=? budget (cfg s) then sp_candidate s else sp_management s.

Definition sp_tokens (s : state) : nat := fixed (cfg s) + sp_costs (sp_render s).

(* ------------------------------------------------------------------ *)
(* The dashboard's budget line: overhead = fixed + system positions,
   conversation = every other position + pending placeholders. *)

Definition sp_system_turn (t : turn) : bool :=
  match t with TP b => match b_kind b with KSystem => true | _ => false end | _ => false end.

Definition sp_overhead (s : state) : nat :=
  fixed (cfg s) + sp_costs (concat (map (sp_turn s) (filter sp_system_turn (turns s)))).

Definition sp_conversation (s : state) : nat :=
  sp_costs (concat (map (sp_turn s) (filter (fun t => negb (sp_system_turn t)) (turns s))))
  + sp_costs (sp_pending s).

(* ------------------------------------------------------------------ *)
(* The ledger (Implementation Details, "Dashboard format"): one row per live
   top-level unit, ordered by its first block, with
   ID, ~Tok, Age (root-turn distance), Type, Level, Parent, Status. *)

(* Root turns: each element of [turns] is one root turn (a system, user,
   assistant or tool-call registration); a tool result is in its call's. *)
Fixpoint sp_turn_no (ts : list turn) (i n : nat) : nat :=
  match ts with
  | [] => 0
  | t :: r => if existsb (fun b => Nat.eqb (b_id b) n) (sp_blocks_of t) then i
              else sp_turn_no r (S i) n
  end.

Definition sp_age (s : state) (n : nat) : nat :=
  length (turns s) - sp_turn_no (turns s) 1 n.

(* The call block a result answers: the call of the turn it is in. *)
Fixpoint sp_parent_of (ts : list turn) (n : nat) : option nat :=
  match ts with
  | [] => None
  | TP _ :: r => sp_parent_of r n
  | TC c rs :: r => if existsb (fun b => Nat.eqb (b_id b) n) rs then Some (b_id c)
                    else sp_parent_of r n
  end.

Fixpoint sp_call_shown (ts : list turn) (n : nat) : bool :=
  match ts with
  | [] => false
  | TP _ :: r => sp_call_shown r n
  | TC c rs :: r => if existsb (fun b => Nat.eqb (b_id b) n) rs then sp_shown_in_prompt (b_status c)
                    else sp_call_shown r n
  end.

Definition sp_type (k : kind) : utype :=
  match k with
  | KSystem => TSystem | KUser => TUser | KAssistant => TAssistant
  | KCall => TCall | KResult => TResult
  end.

(* ~Tok: in the prompt, what its position costs now; archived or offloaded,
   what it cost when it left the prompt. *)
Definition sp_block_row (s : state) (b : block) : lrow :=
  mkRow (UB (b_id b))
        (if sp_shown_in_prompt (b_status b)
         then sp_costs (sp_position s (sp_call_shown (turns s) (b_id b)) b) else b_tok b)
        (sp_age s (b_id b)) (sp_type (b_kind b)) (b_level b)
        (sp_parent_of (turns s) (b_id b)) (b_status b).

Definition sp_group_row (s : state) (x : group) : lrow :=
  mkRow (UG (g_id x)) (g_tok x) (sp_age s (sp_max (g_leaves x))) TGroup (g_level x) None Archived.

Definition sp_ledger (s : state) : list lrow :=
  concat (map (fun b =>
    match b_group b with
    | None => match b_status b with Deleted => [] | _ => [sp_block_row s b] end
    | Some _ => map (sp_group_row s)
                  (filter (fun x => match g_parent x with
                                    | None => Nat.eqb (sp_first x) (b_id b)
                                    | Some _ => false end) (groups s))
    end) (sp_blocks s)).

(* ------------------------------------------------------------------ *)
(* Archive contract: read_path(h) == payload(S) *)

(* The leaves of a unit, in the order of its payload: a block is its own
   leaf; a group's are its members' leaves, member by member. *)
Fixpoint sp_leaves_f (fuel : nat) (s : state) (u : uid) : list nat :=
  match u with
  | UB n => [n]
  | UG g =>
      match fuel, sp_group s g with
      | S f, Some x => concat (map (sp_leaves_f f s) (g_members x))
      | _, _ => []
      end
  end.

Definition sp_leaves (s : state) (u : uid) : list nat := sp_leaves_f (S (length (groups s))) s u.

(* payload(S): each leaf with its registered bytes. *)
Definition sp_unit_payload (s : state) (u : uid) : list (nat * nat) :=
  flat_map (fun n => match sp_block s n with Some b => [(n, b_data b)] | None => [] end)
           (sp_leaves s u).

(* read_path(h): read the payload at a key and follow every reference nested
   in a group payload (one step per store entry at most). *)
Fixpoint sp_read_f (fuel : nat) (st : list (key * value)) (k : key) : option (list (nat * nat)) :=
  match fuel with
  | 0 => None
  | S f =>
      match sp_lookup k st, k with
      | Some (VRaw d), KB n => Some [(n, d)]
      | Some (VGrp es), KG _ =>
          fold_right (fun e acc =>
            match acc, e with
            | Some l, EIn (UB m) d => Some ((m, d) :: l)
            | Some l, ERef _ k' => match sp_read_f f st k' with
                                   | Some l' => Some (l' ++ l)
                                   | None => None
                                   end
            | _, _ => None
            end) (Some []) es
      | _, _ => None
      end
  end.

Definition sp_read_path (s : state) (k : key) : option (list (nat * nat)) :=
  sp_read_f (S (length (store s))) (store s) k.

Definition sp_level (s : state) (u : uid) : nat :=
  match u with
  | UB n => match sp_block s n with Some b => b_level b | None => 0 end
  | UG g => match sp_group s g with Some x => g_level x | None => 0 end
  end.

(* The unit a handle or placeholder stands for. *)
Definition sp_handle_unit (f : form) (p : pos) : option uid :=
  match f, p with
  | FHandle u, _ => Some u
  | FPlaceholder, PB n => Some (UB n)
  | _, _ => None
  end.

Definition sp_key_of (u : uid) : key := match u with UB n => KB n | UG g => KG g end.

(* ------------------------------------------------------------------ *)
(* Deletion *)

(* Store entries that hold block [n]'s bytes: its own payload, or an inlined
   entry of a group payload. *)
Definition sp_holds (n : nat) (kv : key * value) : bool :=
  match kv with
  | (KB m, VRaw _) => Nat.eqb m n
  | (_, VGrp es) => existsb (fun e => match e with EIn (UB m) _ => Nat.eqb m n | _ => false end) es
  | _ => false
  end.

Definition sp_deleted (s : state) (n : nat) : bool :=
  match sp_block s n with
  | Some b => match b_status b with Deleted => true | _ => false end
  | None => false
  end.

(* ------------------------------------------------------------------ *)
(* The budget guard (Algorithm 1; Methodology, "Mode switch") *)

(* The results the guard may offload, with the gain of offloading each
   (content minus placeholder, in the form it has now): the visible,
   unrejected tool results already registered, oldest first. *)
Definition sp_gains (s : state) : list (nat * Z) :=
  flat_map (fun t => match t with
    | TP _ => []
    | TC c rs =>
        flat_map (fun r => match b_status r with
          | Visible => if b_rej r then []
                       else [(b_id r, (Z.of_nat (sp_cost r (sp_shown_in_prompt (b_status c)) (b_c r))
                                      - Z.of_nat (sp_cost r (sp_shown_in_prompt (b_status c)) (b_p r)))%Z)]
          | _ => [] end) rs
    end) (turns s).

(* The state the guard evaluates: the new result appended, visible, its
   call id answered. *)
Fixpoint sp_answer (cid : nat) (p : list (nat * nat)) : list (nat * nat) :=
  match p with [] => [] | (i, c) :: r => if Nat.eqb i cid then r else (i, c) :: sp_answer cid r end.

Definition sp_appended (s : state) (cid data : nat) (cc p : nat * nat) (t : nat) : state :=
  let n := S (nblocks s) in
  let r := mkBlock n KResult data cid [] cc p t false Visible None 0 (0, 0) 0 in
  mkState (cfg s)
    (match rev (turns s) with
     | TC c rs :: before => rev before ++ [TC c (rs ++ [r])]
     | _ => turns s
     end)
    (sp_answer cid (pending s)) (owner s) (groups s) (store s) n (ngroups s) (dash s) (mdash s).

(* What the floor reserves for the kept batch (keep_pending, while calls
   wait): the batch and the notice reserve per pending call. *)
Definition sp_need (s : state) : nat :=
  if sp_keeps s then sp_costs (sp_kept s) + length (pending s) * nres (cfg s) else 0.

(* The order the guard offloads in: oldest first; with cache_prefix, first
   the results the management rendering would not show (after its cut,
   estimated with the worst-case dashboard and the floor's reserve for a
   kept batch, on the state with the new result, and before the new
   result), oldest first, then the others.  With keep_pending, while calls
   of the new result's batch still wait, only results before the batch's
   call are offloaded (the batch stays whole). *)
Definition sp_guard_order (s : state) (cid data : nat) (cc p : nat * nat) (t : nat)
    : list (nat * Z) :=
  let s1 := sp_appended s cid data cc p t in
  let gs := if sp_keeps s1 then filter (fun g => Nat.ltb (fst g) (owner s)) (sp_gains s)
            else sp_gains s in
  if cache_prefix (cfg s) then
    let k0 := sp_cut s1 (budget (cfg s) - (fixed (cfg s) + sp_costs (sp_pinned s1) + mgmt (cfg s)
                                           + sp_need s1)) in
    let k := if Nat.leb k0 (nblocks s) then k0 else nblocks s in
    filter (fun g => Nat.ltb k (fst g)) gs ++
    filter (fun g => negb (Nat.ltb k (fst g))) gs
  else gs.

(* The shortest prefix of [l] whose gains add up to at least [need] (None:
   not even all of [l]). *)
Fixpoint sp_cover (l : list (nat * Z)) (need : Z) : option (list nat) :=
  if (need <=? 0)%Z then Some []
  else match l with
       | [] => None
       | (n, g) :: r => match sp_cover r (need - g)%Z with
                        | Some q => Some (n :: q)
                        | None => None
                        end
       end.

(* The candidate's cost without its dashboard: fixed overhead, every
   position, the pending placeholders. *)
Definition sp_content (s : state) : nat :=
  fixed (cfg s) + sp_costs (concat (map (sp_turn s) (turns s)) ++ sp_pending s).

Definition sp_pinned_cost (s : state) : nat := sp_costs (sp_pinned s).

(* The position of the call whose results are pending. *)
Definition sp_call_cost (s : state) : nat :=
  match sp_block s (owner s) with
  | Some b => sp_costs (sp_position s false b)
  | None => 0
  end.

(* The pending placeholder of call [cid]. *)
Fixpoint sp_pend_cost (p : list (nat * nat)) (cid : nat) : nat :=
  match p with [] => 0 | (i, c) :: r => if Nat.eqb i cid then c else sp_pend_cost r cid end.

(* The dashboard figure of the guard's k-th evaluation (the last repeats). *)
Definition sp_dash_at (ds : list nat) (k : nat) : nat :=
  match nth_error ds k with Some x => x | None => last ds 0 end.
