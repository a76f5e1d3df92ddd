(* Theorem 1, part (E): adaptive policies reduce to a fixed (Y,U)-measurable
   archive order.  The policy chooses each next block from (y, u, the overflow
   flags observed so far).  Before the bulky block is archived every flag
   reads "over", so the run archives exactly a prefix of the fixed order
   t |-> policy y u (true, ..., true) (t flags), and the number of archived
   load-bearing blocks is exactly min(tau - 1, kappa).  Hence the lower bound
   of Theorem1.v applies verbatim to every adaptive policy. *)

From Coq Require Import Reals Lra.
From mathcomp Require Import ssreflect ssrfun ssrbool eqtype ssrnat seq.
From mathcomp Require Import fintype finset bigop finfun.
From VistaLab Require Import Entropy ListFano Theorem1.

Set Implicit Arguments.
Unset Strict Implicit.
Unset Printing Implicit Defensive.

Local Open Scope R_scope.

Lemma rcons_nseq (A : Type) (x : A) t : rcons (nseq t x) x = nseq t.+1 x.
Proof. by elim: t => //= t ->. Qed.

Section Adaptive.
Variables n kappa ell : nat.
Hypothesis kappa_ge1 : (1 <= kappa)%N.
Hypothesis ell_pos : (0 < ell)%N.
Variables TY TU : finType.

(* An adaptive policy: next block as a function of (y, u, flags so far),
   flag = true means "overflow remains". *)
Variable policy : TY -> TU -> seq bool -> 'I_n.

(* Net sizes: the bulky block frees L = kappa * ell, the others ell. *)
Definition size_of (jstar j : 'I_n) : nat := if j == jstar then (kappa * ell)%N else ell.

(* The interaction: archive the chosen block, observe the flag
   "freed < L", stop as soon as the flag clears. *)
Fixpoint run (y : TY) (u : TU) (jstar : 'I_n) (fuel : nat) (flags : seq bool)
    (freed : nat) : seq 'I_n :=
  match fuel with
  | 0 => [::]
  | f.+1 =>
      let b := policy y u flags in
      let freed' := (freed + size_of jstar b)%N in
      let over := (freed' < kappa * ell)%N in
      b :: (if over then run y u jstar f (rcons flags over) freed' else [::])
  end.

Definition archived y u jstar := run y u jstar n [::] 0.

(* Number of archived load-bearing blocks. *)
Definition Zad y u jstar : nat := count (fun b => b != jstar) (archived y u jstar).

(* The fixed order read off the all-"over" flag history. *)
Definition ordr y u (t : nat) : 'I_n := policy y u (nseq t true).
Definition pi_ad y u (t : 'I_n) : 'I_n := ordr y u t.

(* The policy never archives a block twice along that history. *)
Hypothesis ordr_inj : forall y u, injective (pi_ad y u).

Let tau0 y u j : 'I_n := Theorem1.tau0 ordr_inj y u j.

Lemma ordr_tau0 y u j : ordr y u (tau0 y u j) = j.
Proof. exact: (f_invF (@ordr_inj y u)). Qed.

Lemma ordr_neq y u j (t : nat) : (t < tau0 y u j)%N -> ordr y u t != j.
Proof.
move=> lt; apply/eqP => e.
have tn : (t < n)%N by apply: ltn_trans lt (ltn_ord _).
have : pi_ad y u (Ordinal tn) = pi_ad y u (tau0 y u j) by rewrite /pi_ad /= e ordr_tau0.
by move/(@ordr_inj y u)/(congr1 val) => /= et; move: lt; rewrite et ltnn.
Qed.

Lemma over_step t : (t * ell + ell < kappa * ell)%N = (t.+1 < kappa)%N.
Proof. by rewrite addnC -mulSn ltn_pmul2r. Qed.

Lemma freed_step t : (t * ell + ell = t.+1 * ell)%N.
Proof. by rewrite mulSn addnC. Qed.

Lemma over_bulky t : (t * ell + kappa * ell < kappa * ell)%N = false.
Proof. by rewrite ltnNge leq_addl. Qed.

(* The run is a prefix of the fixed order. *)
Lemma run_prefix y u j f t :
  (t + f = n)%N -> (t <= tau0 y u j)%N -> (t < kappa)%N ->
  run y u j f (nseq t true) (t * ell) =
    [seq ordr y u s | s <- iota t (minn (tau0 y u j).+1 kappa - t)].
Proof.
elim: f t => [|f IH] t tf tle tk.
  rewrite addn0 in tf; subst t.
  by move: (ltn_ord (tau0 y u j)); rewrite ltnNge tle.
rewrite /= -/(ordr y u t).
case: (ltngtP t (tau0 y u j)) tle => // [lt|eq] _.
  rewrite /size_of (negbTE (ordr_neq lt)) over_step.
  have h : (t < minn (tau0 y u j).+1 kappa)%N by rewrite leq_min ltnS (ltnW lt) tk.
  case: ifP => over.
    by rewrite over rcons_nseq freed_step IH ?addSnnS // -(subnSK h).
  have k1 : kappa = t.+1 by apply/eqP; rewrite eqn_leq tk andbT leqNgt over.
  have e : minn (tau0 y u j).+1 kappa = t.+1.
    by rewrite k1; apply/minn_idPr; rewrite ltnS (ltnW lt).
  by rewrite e subSnn.
move: tk; rewrite eq => tk; rewrite ordr_tau0 /size_of eqxx over_bulky.
have -> : minn (tau0 y u j).+1 kappa = (tau0 y u j).+1 by apply/minn_idPl.
by rewrite subSnn /= ordr_tau0.
Qed.

Lemma run_count y u j f t :
  (t + f = n)%N -> (t <= tau0 y u j)%N -> (t < kappa)%N ->
  count (fun b => b != j) (run y u j f (nseq t true) (t * ell)) =
    (minn (tau0 y u j) kappa - t)%N.
Proof.
elim: f t => [|f IH] t tf tle tk.
  rewrite addn0 in tf; subst t.
  by move: (ltn_ord (tau0 y u j)); rewrite ltnNge tle.
rewrite /= -/(ordr y u t).
case: (ltngtP t (tau0 y u j)) tle => // [lt|eq] _.
  rewrite /size_of (negbTE (ordr_neq lt)) over_step /=.
  case: ifP => over.
    rewrite over rcons_nseq freed_step IH ?addSnnS // add0n subnSK //.
    by rewrite leq_min lt (ltnW over).
  have k1 : kappa = t.+1 by apply/eqP; rewrite eqn_leq tk andbT leqNgt over.
  have e : minn (tau0 y u j) kappa = t.+1.
    by rewrite k1; apply/minn_idPr; exact: lt.
  by rewrite e subSnn.
move: tk; rewrite eq => tk; rewrite ordr_tau0 /size_of eqxx over_bulky /=.
by rewrite (minn_idPl (ltnW tk)) subnn.
Qed.

(* (E) The adaptive run archives exactly the first min(tau, kappa) blocks of
   the fixed order pi_ad(y,u), and its load-bearing count is
   Z = min(tau - 1, kappa), the quantity bounded in Theorem1.v. *)
Theorem adaptive_archives_prefix y u j :
  archived y u j = [seq ordr y u s | s <- iota 0 (minn (tau0 y u j).+1 kappa)].
Proof. by rewrite /archived -[[::]]/(nseq 0 true) -(mul0n ell) run_prefix ?subn0. Qed.

Theorem adaptive_Z y u j : Zad y u j = Theorem1.Z kappa ordr_inj y u j.
Proof.
by rewrite /Zad /archived -[[::]]/(nseq 0 true) -(mul0n ell) run_count ?subn0.
Qed.

(* Hence the lower bound of part (B) holds for every adaptive policy. *)
Theorem adaptive_lower_bound (pJY : 'I_n -> TY -> R) (pU : TU -> R) :
  is_joint pJY -> (forall j, marg1 pJY j = / INR n) -> is_dist pU ->
  (kappa.*2 < n)%N ->
  INR kappa * Rmax 0 (1 - (MI pJY + 1) / nu n kappa)
    <= \sum_j \sum_y \sum_u pJY j y * pU u * INR (Zad y u j).
Proof.
move=> pj ju pu kn.
have -> : \sum_j \sum_y \sum_u pJY j y * pU u * INR (Zad y u j)
          = EZ kappa pJY pU ordr_inj.
  by apply: eq_bigr => j _; apply: eq_bigr => y _; apply: eq_bigr => u _;
     rewrite adaptive_Z.
exact: EZ_lower_bound.
Qed.

End Adaptive.

(* ------------------------------------------------------------------ *)
(* (E), first reduction: batch policies.  A batch policy archives a set
   S(y,u) at once; it is admissible when it clears the overflow almost
   surely, i.e. on every outcome (J*, Y, U) of positive probability it
   contains J* or at least kappa blocks (freed >= L = kappa ell).  Its cost is
   the number of archived load-bearing blocks |S \ {J*}|.  Archiving S first,
   in any order, is a sequential order whose Z = min(tau - 1, kappa) is never
   larger, so the lower bound of part (B) covers every batch policy. *)

Section Batch.
Variable n : nat.

Definition sfirst (A : {set 'I_n}) : seq 'I_n := enum A ++ enum (~: A).

Lemma sfirst_uniq A : uniq (sfirst A).
Proof.
rewrite cat_uniq !enum_uniq andbT /=; apply/hasPn => x.
by rewrite mem_enum inE => h; rewrite inE mem_enum.
Qed.

Lemma sfirst_size A : size (sfirst A) = n.
Proof. by rewrite size_cat -!cardE cardsC card_ord. Qed.

Lemma sfirst_mem A j : j \in sfirst A.
Proof. by rewrite mem_cat !mem_enum inE; case: (j \in A). Qed.

(* The order: position t |-> the t-th element of S ++ complement. *)
Definition spi (A : {set 'I_n}) (t : 'I_n) : 'I_n := nth t (sfirst A) t.

Lemma spi_inj A : injective (spi A).
Proof.
move=> t1 t2; rewrite /spi.
have l1 : (t1 < size (sfirst A))%N by rewrite sfirst_size.
have l2 : (t2 < size (sfirst A))%N by rewrite sfirst_size.
rewrite [nth t2 _ _](set_nth_default t1) // => e; apply: val_inj => /=.
by apply/eqP; rewrite -(nth_uniq t1 l1 l2 (sfirst_uniq A)) e.
Qed.

Lemma index_lt A j : (index j (sfirst A) < n)%N.
Proof. by rewrite -{2}(sfirst_size A) index_mem sfirst_mem. Qed.

Lemma spi_index A j : spi A (Ordinal (index_lt A j)) = j.
Proof.
rewrite /spi /= (set_nth_default j) ?nth_index ?sfirst_mem //.
by rewrite sfirst_size index_lt.
Qed.

Lemma tau0_spi A j : invF (@spi_inj A) j = Ordinal (index_lt A j).
Proof. by rewrite -{1}(spi_index A j) invF_f. Qed.

(* Pointwise: the refined order's Z is at most the batch cost. *)
Lemma batch_Z_le kappa (A : {set 'I_n}) (j : 'I_n) : j \in A \/ (kappa <= #|A|)%N ->
  (minn (invF (@spi_inj A) j) kappa <= #|A :\ j|)%N.
Proof.
move=> adm; rewrite tau0_spi /= /sfirst index_cat mem_enum.
have cD := cardsD1 j A.
case: ifP => jA.
  have : (index j (enum A) < #|A|)%N by rewrite cardE index_mem mem_enum.
  rewrite cD jA add1n ltnS => h.
  exact: leq_trans (geq_minl _ _) h.
have k : (kappa <= #|A|)%N by case: adm => //; rewrite jA.
by rewrite cD jA add0n in k; exact: leq_trans (geq_minr _ _) k.
Qed.

Theorem batch_lower_bound kappa (TY TU : finType) (pJY : 'I_n -> TY -> R) (pU : TU -> R)
    (S : TY -> TU -> {set 'I_n}) :
  is_joint pJY -> (forall j, marg1 pJY j = / INR n) -> is_dist pU ->
  (1 <= kappa)%N -> (kappa.*2 < n)%N ->
  (forall y u j, 0 < pJY j y * pU u -> j \in S y u \/ (kappa <= #|S y u|)%N) ->
  INR kappa * Rmax 0 (1 - (MI pJY + 1) / nu n kappa)
    <= \sum_j \sum_y \sum_u pJY j y * pU u * INR #|S y u :\ j|.
Proof.
move=> pj ju pu k1 kn adm.
apply: (Rle_trans _ _ _
  (EZ_lower_bound pj ju pu k1 kn (fun y u => @spi_inj (S y u)))).
apply: leR_sum => j _; apply: leR_sum => y _; apply: leR_sum => u _.
have w0 : 0 <= pJY j y * pU u by apply: Rmult_le_pos; [exact: pj.1 | exact: pu.1].
case: (Rle_lt_or_eq_dec _ _ w0) => [wpos | e]; last by rewrite /w -e !Rmult_0_l; apply: Rle_refl.
apply: Rmult_le_compat_l => //.
apply: le_INR; apply/leP; rewrite /Z /tau0.
exact: batch_Z_le (adm y u j wpos).
Qed.

End Batch.

